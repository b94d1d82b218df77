package lineage.sql.provenance;

import java.util.List;
import java.util.Set;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * Operators whose every output row is one input row, given its columns (and maybe values of its
 * own): the child's hidden columns go through them unchanged, as their output is the child's.
 */
final class PassThrough implements OperatorRewrite {

    @Override
    public boolean takesLists() {
        return true;
    }
    static final Set<String> KINDS = Set.of("Sort", "GlobalLimit", "LocalLimit", "Offset", "Sample",
            "Repartition", "RepartitionByExpression", "RebalancePartitions", "Generate", "BatchEvalPython",
            "ArrowEvalPython", "WindowGroupLimit", "Tail");

    @Override
    public boolean accepts(LogicalPlan node) {
        return node.children().size() == 1 && KINDS.contains(node.getClass().getSimpleName());
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Carried child = children.get(0);
        LogicalPlan plan = node.withNewChildren(Scala.seq(List.of(child.plan())));
        return new Carried(plan, child.slots(), child.rule());
    }
}
