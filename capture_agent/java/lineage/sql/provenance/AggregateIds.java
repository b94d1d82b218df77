package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/** An aggregate's row holds, per source, the set of the ids of every row of its group
 * (lineage_ids, lineage_union: {@code lineage.sql.IdSets}), aggregated beside Spark's own. */
final class AggregateIds implements OperatorRewrite {

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Aggregate;
    }

    @Override
    public String refuses(LogicalPlan node) {
        for (NamedExpression e : Scala.list(((Aggregate) node).aggregateExpressions())) {
            if (Expressions.find((Expression) e, "PythonUDF", "PythonUDAF") != null) {
                return "a pandas aggregate UDF (Spark runs it apart from any other aggregate)";
            }
        }
        return null;
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Aggregate aggregate = (Aggregate) node;
        Carried child = children.get(0);
        List<NamedExpression> list = new ArrayList<>(Scala.list(aggregate.aggregateExpressions()));
        List<Slot> slots = rewriter.gathered(child.slots(), list);
        Aggregate plan = new Aggregate(aggregate.groupingExpressions(), Scala.seq(list), child.plan(),
                aggregate.hint());
        return new Carried(plan, slots, "sum");
    }
}
