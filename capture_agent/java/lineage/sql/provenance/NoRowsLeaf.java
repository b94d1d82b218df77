package lineage.sql.provenance;

import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/** A leaf of no source rows: the one row of a query without FROM, or an empty relation (the
 * optimizer puts one where it proved a subtree empty). Its rows carry no ids. */
final class NoRowsLeaf implements OperatorRewrite {

    static boolean isNoRows(LogicalPlan node) {
        String kind = node.getClass().getSimpleName();
        return kind.equals("OneRowRelation") || node instanceof LocalRelation local && local.data().isEmpty();
    }

    @Override
    public boolean accepts(LogicalPlan node) {
        return node.children().isEmpty() && isNoRows(node);
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        return new Carried(node, List.of(), "copy");
    }
}
