package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.CreateNamedStruct;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ArrayFilter;
import org.apache.spark.sql.catalyst.expressions.ArrayTransform;
import org.apache.spark.sql.catalyst.expressions.GetStructField;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.LambdaFunction;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression$;
import org.apache.spark.sql.catalyst.expressions.NamedLambdaVariable;
import org.apache.spark.sql.catalyst.expressions.Size;
import org.apache.spark.sql.catalyst.expressions.aggregate.CollectList;
import org.apache.spark.sql.catalyst.plans.ExistenceJoin;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.types.DataTypes;
import scala.Option;

/**
 * A semi or existence join whose condition compares some right columns equal to the left row and
 * reads others otherwise (TPC-DS 16 and 94: {@code EXISTS (... ws1.order = ws2.order AND
 * ws1.warehouse <> ws2.warehouse)}). The right side is nested under the equal columns: one row per
 * value of those, holding the list of its entries. When each right row carries ids (no set: rows
 * of a table, groups of a tapped aggregate), an entry is a right row (the columns the condition
 * reads, its ids), as Spark's own semi join goes through the rows of a key; else an entry is a
 * group (one per value of every right column the condition reads) with its id sets. Each left row
 * joins the one nest of its values (inner for a semi join, left outer for an existence join),
 * keeps the entries the rest of the condition holds for ({@code filter} over the list), is kept
 * (or is {@code exists}) when one is left, and takes their ids as a set ({@code lineage_set_all})
 * or the union of their sets ({@code lineage_union_all}). The rows stay one for one: no left row
 * is numbered, shuffled and grouped again, as {@code SemiJoinIds} does when no right column is
 * compared equal.
 */
final class NestedMatch {
    private NestedMatch() {
    }

    static LogicalPlan matched(Join join, Carried left, Carried right, Aggregate groups, List<Expression> equal,
                               List<Slot> sets, boolean existence, Rewriter rewriter) {
        AttributeSet keyed = SemiJoinIds.compared(join, equal);
        // right rows with ids, none a set (a table's rows, a tapped aggregate's groups): the rows
        // themselves are nested, as Spark's own semi join goes through a key's rows; else the groups
        boolean rows = right.slots().stream().noneMatch(Slot::set);
        LogicalPlan nestedFrom = rows ? right.plan() : groups;
        // the right columns the rest of the condition reads, then the ids or sets, as one struct an entry
        List<Attribute> others = new ArrayList<>();
        for (Attribute a : Scala.list(groups.output())) {
            if (join.right().outputSet().contains(a) && !keyed.contains(a)) {
                others.add(a);
            }
        }
        List<Expression> fields = new ArrayList<>();
        Map<ExprId, Integer> position = new HashMap<>();
        for (Attribute a : others) {
            position.put(a.exprId(), position.size());
            fields.add(Literal.create("c" + position.size(), DataTypes.StringType));
            fields.add(a);
        }
        List<Slot> carried = rows ? right.slots() : sets;
        for (Slot slot : carried) {
            fields.add(Literal.create("s" + fields.size(), DataTypes.StringType));
            fields.add(slot.attribute());
        }
        CreateNamedStruct group = new CreateNamedStruct(Scala.seq(fields));
        List<NamedExpression> nestList = new ArrayList<>();
        List<Expression> nestKeys = new ArrayList<>();
        for (Attribute a : Scala.list(groups.output())) {
            if (keyed.contains(a)) {
                nestList.add(a);
                nestKeys.add(a);
            }
        }
        Alias nested = rewriter.alias(new CollectList(group).toAggregateExpression(), rewriter.fresh());
        nestList.add(nested);
        Aggregate nests = new Aggregate(Scala.seq(nestKeys), Scala.seq(nestList), nestedFrom, Option.empty());
        Join plan = new Join(left.plan(), nests, existence ? LeftOuter$.MODULE$ : Inner$.MODULE$,
                Option.apply(conjunction(equal)), Broadcasts.hint(join));

        // the nest's groups the rest of the condition holds for
        NamedLambdaVariable x = new NamedLambdaVariable("x", group.dataType(), false,
                NamedExpression$.MODULE$.newExprId(), new java.util.concurrent.atomic.AtomicReference<>());
        Map<ExprId, Expression> inGroup = new HashMap<>();
        for (Attribute a : others) {
            int at = position.get(a.exprId());
            inGroup.put(a.exprId(), new GetStructField(x, at, Option.empty()));
        }
        List<Expression> rest = new ArrayList<>();
        for (Expression part : Expressions.conjuncts(join.condition().get())) {
            if (!equal.contains(part)) {
                rest.add(Expressions.replaced(part, inGroup));
            }
        }
        Expression held = new ArrayFilter(nested.toAttribute(),
                new LambdaFunction(conjunction(rest), Scala.seq(List.<NamedExpression>of(x)), false));
        Alias matches = rewriter.alias(held, rewriter.fresh());
        List<NamedExpression> withMatches = new ArrayList<>(Scala.list(left.plan().output()));
        withMatches.add(matches);
        LogicalPlan kept = new Project(Scala.seq(withMatches), plan);
        Expression any = new GreaterThan(new Size(matches.toAttribute(), false), Literal.create(0, DataTypes.IntegerType));
        if (!existence) {
            kept = new Filter(any, kept);
        }
        List<NamedExpression> out = new ArrayList<>(Scala.list(left.plan().output()));
        if (existence) {
            Attribute exists = ((ExistenceJoin) join.joinType()).exists();
            out.add(new Alias(new Coalesce(Scala.seq(List.of(any, Literal.create(false, DataTypes.BooleanType)))),
                    exists.name(), exists.exprId(), exists.qualifier(), Option.empty(), Scala.seq(List.of())));
        }
        for (int i = 0; i < sets.size(); i++) {
            Attribute set = sets.get(i).attribute();
            NamedLambdaVariable g = new NamedLambdaVariable("g", group.dataType(), false,
                    NamedExpression$.MODULE$.newExprId(), new java.util.concurrent.atomic.AtomicReference<>());
            Expression each = new ArrayTransform(matches.toAttribute(), new LambdaFunction(
                    new GetStructField(g, others.size() + i, Option.empty()), Scala.seq(List.<NamedExpression>of(g)), false));
            out.add(new Alias(rewriter.call(rows ? "lineage_set_all" : "lineage_union_all", each), set.name(), set.exprId(),
                    Scala.seq(List.of()), Option.empty(), Scala.seq(List.of())));
        }
        return new Project(Scala.seq(out), kept);
    }

    private static Expression conjunction(List<Expression> parts) {
        Expression out = parts.get(0);
        for (int i = 1; i < parts.size(); i++) {
            out = new And(out, parts.get(i));
        }
        return out;
    }
}
