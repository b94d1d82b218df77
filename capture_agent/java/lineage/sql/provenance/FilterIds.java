package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/** A filter keeps its rows' hidden columns; its dynamic-pruning conditions (which only skip
 * partitions of a table the rewrite reads through its own source) are dropped. */
final class FilterIds implements OperatorRewrite {

    @Override
    public boolean takesLists() {
        return true;
    }

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Filter;
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Carried child = children.get(0);
        List<Expression> kept = new ArrayList<>();
        for (Expression part : Expressions.conjuncts(((Filter) node).condition())) {
            if (!Expressions.isDynamicPruning(part)) {
                kept.add(part);
            }
        }
        if (kept.isEmpty()) {
            return child;
        }
        Expression condition = kept.get(0);
        for (int i = 1; i < kept.size(); i++) {
            condition = new And(condition, kept.get(i));
        }
        return new Carried(new Filter(condition, child.plan()), child.slots(), child.rule());
    }
}
