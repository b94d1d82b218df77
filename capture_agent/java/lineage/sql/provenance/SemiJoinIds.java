package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.EqualNullSafe;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
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
 * right columns the condition reads, each group with the sets of its rows' ids, and joined to the
 * left as the condition says (inner for a semi join, left outer for an existence join, whose
 * {@code exists} is then whether a group matched): a left row matches at most one group when
 * each such column is compared equal to a value of the left row, which the rewrite requires.
 */
final class SemiJoinIds implements OperatorRewrite {

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Join join && (join.joinType() == LeftSemi$.MODULE$
                || join.joinType() instanceof ExistenceJoin);
    }

    @Override
    public String refuses(LogicalPlan node) {
        Join join = (Join) node;
        AttributeSet rightSide = join.right().outputSet();
        Set<Attribute> keyed = new LinkedHashSet<>();
        List<Expression> parts = join.condition().isDefined()
                ? Expressions.conjuncts(join.condition().get()) : List.of();
        for (Expression part : parts) {
            if (part instanceof EqualTo || part instanceof EqualNullSafe) {
                BinaryComparison eq = (BinaryComparison) part;
                if (keys(eq.left(), eq.right(), rightSide)) {
                    keyed.add((Attribute) eq.left());
                } else if (keys(eq.right(), eq.left(), rightSide)) {
                    keyed.add((Attribute) eq.right());
                }
            }
        }
        for (Attribute a : readOnRight(join)) {
            if (!keyed.contains(a)) {
                return "a semi join whose condition reads the right column " + a.name()
                        + " other than as an equal key";
            }
        }
        return null;
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
        Carried left = children.get(0);
        Carried right = children.get(1);
        List<Attribute> keys = readOnRight(join);
        List<NamedExpression> list = new ArrayList<>(keys);
        List<Slot> sets = new ArrayList<>();
        for (Slot slot : right.slots()) {
            Alias ids = rewriter.alias(rewriter.gather(slot), rewriter.fresh());
            list.add(ids);
            sets.add(slot.as(ids.toAttribute(), true));
        }
        boolean existence = join.joinType() instanceof ExistenceJoin;
        Alias marker = rewriter.alias(Literal.create(true, DataTypes.BooleanType), rewriter.fresh());
        if (existence) {
            list.add(marker);
        }
        List<Expression> grouping = new ArrayList<>(keys);
        Aggregate groups = new Aggregate(Scala.seq(grouping), Scala.seq(list), right.plan(), Option.empty());
        Join plan = new Join(left.plan(), groups, existence ? LeftOuter$.MODULE$ : Inner$.MODULE$,
                join.condition(), join.hint());
        List<NamedExpression> out = new ArrayList<>(Scala.list(left.plan().output()));
        if (existence) {
            Attribute exists = ((ExistenceJoin) join.joinType()).exists();
            out.add(new Alias(new IsNotNull(marker.toAttribute()), exists.name(), exists.exprId(),
                    exists.qualifier(), Option.empty(), Scala.seq(List.of())));
        }
        for (Slot slot : sets) {
            out.add(slot.attribute());
        }
        LogicalPlan projected = new Project(Scala.seq(out), plan);
        Carried merged = JoinIds.merged(projected, left, sets, rewriter, "sum");
        return new Carried(merged.plan(), merged.slots(), "sum");
    }
}
