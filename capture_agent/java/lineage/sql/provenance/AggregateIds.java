package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import lineage.sql.TapGroup;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;

/**
 * An aggregate over one to {@link lineage.sql.Tap#MAX_SOURCES} (32) sources' ids (or lists of
 * ids, {@link Slot#list}), none a set, is
 * tapped, as a captured DataFrame's aggregate is ({@code lineage.sql.Tap}): Spark's own aggregate, with one more function that is
 * the group's 63-bit hash and, on the map side, writes which ids went into which group as the
 * tables of a combiner point; an output row's id there is its group's hash. Any other aggregate's
 * row holds, per source, the set of the ids of every row of its group (lineage_ids,
 * lineage_union: {@code lineage.sql.IdSets}), aggregated beside Spark's own: that set travels
 * through the shuffle, which costs a row a bitmap insertion and the group's set its bytes.
 */
final class AggregateIds implements OperatorRewrite {

    @Override
    public boolean takesLists() {
        return true;
    }

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
        Rewriter.Taken tap = rewriter.tapFor(aggregate, child.slots(), false);
        List<Slot> slots = tap == null ? rewriter.gathered(child.slots(), list)
                : List.of(tapped(Scala.list(aggregate.groupingExpressions()), child, tap, list, rewriter));
        Aggregate plan = new Aggregate(aggregate.groupingExpressions(), Scala.seq(list), child.plan(),
                aggregate.hint());
        return new Carried(plan, slots, "sum");
    }

    /** The tap's function over the hash of the group's {@code grouping} and the child's ids, added to
     * {@code list}; its slot. */
    static Slot tapped(List<Expression> grouping, Carried child, Rewriter.Taken tap, List<NamedExpression> list,
            Rewriter rewriter) {
        Expression hash = groupHash(grouping, rewriter);
        List<Expression> ids = new ArrayList<>(child.slotAttributes());
        Alias group = rewriter.alias(TapGroup.function(tap.tap(), hash, ids), rewriter.fresh());
        list.add(group);
        return new Slot(tap.point(), group.toAttribute(), false);
    }

    /** The 63-bit hash of a group's {@code keys} ({@link TapGroup#groupHash}): a tapped row's group id. */
    static Expression groupHash(List<Expression> keys, Rewriter rewriter) {
        StructField[] fields = new StructField[keys.size()];
        for (int i = 0; i < fields.length; i++) {
            fields[i] = new StructField("k" + i, keys.get(i).dataType(), keys.get(i).nullable(), Metadata.empty());
        }
        return TapGroup.groupHash(keys, fields, key -> rewriter.call("to_json", key));
    }
}
