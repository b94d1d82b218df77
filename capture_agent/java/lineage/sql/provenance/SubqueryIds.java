package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.CreateNamedStruct;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GetStructField;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.ScalarSubquery;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import scala.Function1;
import scala.Option;

/**
 * Scalar subqueries an operator's expressions hold (uncorrelated: the optimizer made joins of the
 * correlated ones): each subquery's plan is rewritten too and gives a struct of its value and its
 * sources' id sets; the operator reads the value from it, and its rows get the sets beside their
 * own ids (a row filtered or computed by a subquery's value was made from the subquery's rows
 * too). Spark runs the subquery once however often the struct is read (its reuse of subqueries).
 */
final class SubqueryIds {
    private SubqueryIds() {
    }

    /** The uncorrelated scalar subqueries of {@code e}. */
    static void find(Expression e, List<ScalarSubquery> out) {
        if (e instanceof ScalarSubquery sq && sq.outerAttrs().isEmpty()) {
            out.add(sq);
            return;
        }
        for (Expression child : Scala.list(e.children())) {
            find(child, out);
        }
    }

    static List<ScalarSubquery> of(LogicalPlan node) {
        List<ScalarSubquery> out = new ArrayList<>();
        for (Expression e : Scala.list(node.expressions())) {
            find(e, out);
        }
        return out;
    }

    /** An operator with its scalar subqueries rewritten, and the sets its rows are to get. */
    record Prepared(LogicalPlan node, List<Slot> slots, List<Expression> sets) {
    }

    static Prepared prepare(LogicalPlan node, Rewriter rewriter) {
        List<ScalarSubquery> found = of(node);
        if (found.isEmpty()) {
            return new Prepared(node, List.of(), List.of());
        }
        List<Slot> slots = new ArrayList<>();
        List<Expression> sets = new ArrayList<>();
        java.util.Map<ScalarSubquery, Expression> values = new java.util.IdentityHashMap<>();
        for (ScalarSubquery sq : found) {
            Carried inner = rewriter.carry(sq.plan());
            Attribute value = Scala.list(sq.plan().output()).get(0);
            List<Expression> fields = new ArrayList<>(List.of(Literal.create("v", org.apache.spark.sql.types.DataTypes.StringType), value));
            for (int k = 0; k < inner.slots().size(); k++) {
                fields.add(Literal.create("s" + k, org.apache.spark.sql.types.DataTypes.StringType));
                fields.add(rewriter.asSet(inner.slots().get(k)));
            }
            Alias struct = rewriter.alias(new CreateNamedStruct(Scala.seq(fields)), rewriter.fresh());
            // analyzed here: the analysis of the rewritten query does not enter a resolved subquery's
            // plan, where the id-set aggregates' encoders are still to be resolved
            LogicalPlan plan = rewriter.session.sessionState().analyzer().execute(
                    new Project(Scala.seq(List.<NamedExpression>of(struct)), inner.plan()));
            ScalarSubquery rewritten = sq.withNewPlan(plan);
            values.put(sq, new GetStructField(rewritten, 0, Option.apply("v")));
            for (int k = 0; k < inner.slots().size(); k++) {
                Slot slot = inner.slots().get(k);
                Alias ids = rewriter.alias(new GetStructField(rewritten, k + 1, Option.apply("s" + k)), rewriter.fresh());
                sets.add(ids);
                slots.add(slot.as(ids.toAttribute(), true));
            }
        }
        Function1<Expression, Expression> replace = e -> replaced(e, values);
        return new Prepared(node.mapExpressions(replace), slots, sets);
    }

    private static Expression replaced(Expression e, java.util.Map<ScalarSubquery, Expression> values) {
        if (e instanceof ScalarSubquery sq && values.containsKey(sq)) {
            return values.get(sq);
        }
        List<Expression> children = Scala.list(e.children());
        List<Expression> rebuilt = new ArrayList<>();
        boolean changed = false;
        for (Expression child : children) {
            Expression r = replaced(child, values);
            changed |= r != child;
            rebuilt.add(r);
        }
        return changed ? e.withNewChildren(Scala.seq(rebuilt)) : e;
    }

    /** {@code carried} (the operator rewritten) with its subqueries' sets beside its rows' ids. */
    static Carried attach(Carried carried, Prepared prepared, Rewriter rewriter) {
        if (prepared.slots().isEmpty()) {
            return carried;
        }
        List<NamedExpression> list = new ArrayList<>(Scala.list(carried.plan().output()));
        for (Expression set : prepared.sets()) {
            list.add((NamedExpression) set);
        }
        Project projected = new Project(Scala.seq(list), carried.plan());
        Carried merged = JoinIds.merged(projected, carried, prepared.slots(), rewriter, "sum");
        return new Carried(merged.plan(), merged.slots(), "sum");
    }
}
