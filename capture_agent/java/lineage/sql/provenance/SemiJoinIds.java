package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.MonotonicallyIncreasingID;
import org.apache.spark.sql.catalyst.expressions.aggregate.First;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.ExistenceJoin;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.types.DataTypes;
import scala.Option;

/**
 * Left semi joins (IN, EXISTS, INTERSECT) and existence joins (a subquery under OR): a left row
 * holds, beside its own ids, those of the right rows it matched. The right side is grouped by the
 * right columns the condition reads, each group with the sets of its rows' ids (or, when a left
 * row matches one group, the group's id in a combiner point its tap writes, as an aggregate's:
 * {@link AggregateIds}, the ids of rows that carry sets added one by one; a left row then carries
 * one id where it carried a copy of its group's set, which TPC-DS 14 copied into every
 * store_sales row it kept), and joined to the left as the condition says (inner for a semi join,
 * left outer for an existence join, whose {@code exists} is then whether a group matched): a left
 * row matches at most one group when each such column is compared equal to a value of the left
 * row. When the condition also reads other right columns (EXISTS with {@code a.x <> b.x}), a
 * left row may match several right rows: each left row is numbered, joined with the right rows the
 * whole condition holds for (the rows themselves when some right column is compared equal to the
 * left row, as Spark's own semi join goes through a key's rows; else the groups, which a join
 * without equal keys pairs with every left row), and grouped again by its number and those keys:
 * its columns as they were, the union of what it matched ({@link #regroupedMatch}).
 */
final class SemiJoinIds implements OperatorRewrite {

    @Override
    public boolean takesLists() {
        return true;
    }

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Join join && (join.joinType() == LeftSemi$.MODULE$
                || join.joinType() instanceof ExistenceJoin);
    }

    /**
     * Whether a left row is matched on its own (numbered and grouped again): some right column
     * the condition reads is not compared equal to a value of the left row. Else each left row
     * takes the one group of its keys.
     */
    static boolean perRow(Join join) {
        AttributeSet compared = compared(join, equalKeys(join));
        return !readOnRight(join).stream().allMatch(compared::contains);
    }

    /** The condition's parts that compare a right column equal to a value of the left row. */
    static List<Expression> equalKeys(Join join) {
        AttributeSet rightSide = join.right().outputSet();
        List<Expression> out = new ArrayList<>();
        List<Expression> parts = join.condition().isDefined()
                ? Expressions.conjuncts(join.condition().get()) : List.of();
        for (Expression part : parts) {
            if ((part instanceof EqualTo || part instanceof EqualNullSafe)
                    && (keys(((BinaryComparison) part).left(), ((BinaryComparison) part).right(), rightSide)
                        || keys(((BinaryComparison) part).right(), ((BinaryComparison) part).left(), rightSide))) {
                out.add(part);
            }
        }
        return out;
    }

    /** The right columns {@code equal} (parts of {@link #equalKeys}) compare to the left row. */
    static AttributeSet compared(Join join, List<Expression> equal) {
        AttributeSet out = AttributeSet.fromAttributeSets(Scala.seq(List.<AttributeSet>of()));
        for (Expression part : equal) {
            out = out.$plus$plus(part.references().intersect(join.right().outputSet()));
        }
        return out;
    }

    private static boolean keys(Expression side, Expression other, AttributeSet rightSide) {
        return side instanceof Attribute a && rightSide.contains(a) && !other.references().intersect(rightSide).nonEmpty();
    }

    private static List<Attribute> readOnRight(Join join) {
        List<Attribute> out = new ArrayList<>();
        if (join.condition().isDefined()) {
            AttributeSet rightSide = join.right().outputSet();
            for (Attribute a : Scala.list(join.condition().get().references().toSeq())) {
                if (rightSide.contains(a) && !out.contains(a)) {
                    out.add(a);
                }
            }
        }
        return out;
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Join join = (Join) node;
        boolean keyed = !perRow(join);  // a left row matches at most one group of the right side
        Carried left = keyed ? children.get(0) : rewriter.setsForLists(children.get(0));
        Carried right = keyed ? children.get(1) : rewriter.setsForLists(children.get(1));
        List<Attribute> keys = readOnRight(join);
        List<Expression> grouping = new ArrayList<>(keys);
        List<NamedExpression> list = new ArrayList<>(keys);
        Aggregate asWritten = new Aggregate(Scala.seq(grouping), Scala.seq(new ArrayList<>(list)), join.right(),
                Option.empty());  // the groups of the right side as the query reads it (copies share a tap)
        Rewriter.Taken tap = keyed ? rewriter.tapFor(asWritten, right.slots(), true) : null;
        List<Slot> sets = tap == null ? rewriter.gathered(right.slots(), list)
                : List.of(AggregateIds.tapped(grouping, right, tap, list, rewriter));
        boolean existence = join.joinType() instanceof ExistenceJoin;
        Alias marker = rewriter.alias(Literal.create(true, DataTypes.BooleanType), rewriter.fresh());
        if (existence && keyed) {  // keyedMatch's: a regrouped match marks the right rows itself
            list.add(marker);
        }
        Aggregate groups = new Aggregate(Scala.seq(grouping), Scala.seq(list), right.plan(), Option.empty());
        List<Expression> equal = equalKeys(join);
        LogicalPlan matched;
        if (keyed) {
            matched = keyedMatch(join, left, groups, marker, sets, existence);
        } else if (!equal.isEmpty()) {
            matched = regroupedMatch(join, left, right.plan(), right.slots(), sets, equal, existence, rewriter);
        } else {
            matched = regroupedMatch(join, left, groups, sets, sets, equal, existence, rewriter);
        }
        Carried merged = JoinIds.merged(matched, left, sets, rewriter, "sum");
        return new Carried(merged.plan(), merged.slots(), "sum");
    }

    /** Each left row with the one group it matched (inner), or none (existence: left outer). */
    private static LogicalPlan keyedMatch(Join join, Carried left, Aggregate groups, Alias marker, List<Slot> sets,
                                          boolean existence) {
        Join plan = new Join(left.plan(), groups, existence ? LeftOuter$.MODULE$ : Inner$.MODULE$,
                join.condition(), Broadcasts.hint(join));
        List<NamedExpression> out = new ArrayList<>(Scala.list(left.plan().output()));
        if (existence) {
            out.add(exists(join, new IsNotNull(marker.toAttribute())));
        }
        for (Slot slot : sets) {
            out.add(slot.attribute());
        }
        return new Project(Scala.seq(out), plan);
    }

    /**
     * A left row that may match several right rows (or groups): each left row numbered, joined
     * with the {@code right} rows the condition holds for (left outer for an existence join), and
     * grouped again by its number and the left values of the {@code equal} keys: its columns as
     * they were, {@code exists} whether a right row matched, per source the ids of {@code from}
     * gathered as {@code sets} (their columns' names and ids). The keys split no group (a number is
     * one left row already) and spare the regrouping a shuffle after a join shuffled by them. With equal keys
     * the right rows are joined as they are, not grouped first: the rows a left row matches are
     * few (after {@link LateSemiJoins}, so are the left rows: TPC-DS 16's nested list of every
     * order's rows cost more than the join, 94's too).
     */
    private static LogicalPlan regroupedMatch(Join join, Carried left, LogicalPlan right, List<Slot> from,
                                              List<Slot> sets, List<Expression> equal, boolean existence,
                                              Rewriter rewriter) {
        Alias row = rewriter.alias(new MonotonicallyIncreasingID(), rewriter.fresh());
        List<NamedExpression> numbered = new ArrayList<>(Scala.list(left.plan().output()));
        numbered.add(row);
        Alias marker = rewriter.alias(Literal.create(true, DataTypes.BooleanType), rewriter.fresh());
        List<NamedExpression> marked = new ArrayList<>(Scala.list(right.output()));
        marked.add(marker);
        Join plan = new Join(new Project(Scala.seq(numbered), left.plan()), new Project(Scala.seq(marked), right),
                existence ? LeftOuter$.MODULE$ : Inner$.MODULE$, join.condition(), Broadcasts.hint(join));
        List<Expression> grouping = new ArrayList<>();
        AttributeSet rightSide = join.right().outputSet();
        for (Expression part : equal) {
            BinaryComparison compared = (BinaryComparison) part;
            boolean leftFirst = compared.left().references().intersect(rightSide).isEmpty();
            grouping.add(leftFirst ? compared.left() : compared.right());
        }
        grouping.add(row.toAttribute());
        List<NamedExpression> out = new ArrayList<>();
        for (Attribute a : Scala.list(left.plan().output())) {  // as ReplaceDeduplicateWithAggregate keeps them
            out.add(new Alias(new First(a, false).toAggregateExpression(), a.name(), a.exprId(), a.qualifier(),
                    Option.empty(), Scala.seq(List.of())));
        }
        if (existence) {
            Expression any = new Max(marker.toAttribute()).toAggregateExpression();
            out.add(exists(join, new Coalesce(Scala.seq(List.of(any, Literal.create(false, DataTypes.BooleanType))))));
        }
        for (int i = 0; i < sets.size(); i++) {
            Attribute set = sets.get(i).attribute();
            out.add(new Alias(rewriter.gather(from.get(i)), set.name(), set.exprId(), Scala.seq(List.of()),
                    Option.empty(), Scala.seq(List.of())));
        }
        return new Aggregate(Scala.seq(grouping), Scala.seq(out), plan, Option.empty());
    }

    private static Alias exists(Join join, Expression value) {
        Attribute exists = ((ExistenceJoin) join.joinType()).exists();
        return new Alias(value, exists.name(), exists.exprId(), exists.qualifier(), Option.empty(), Scala.seq(List.of()));
    }
}
