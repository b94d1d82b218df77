package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.Cross$;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.JoinHint;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import scala.Option;

/**
 * A semi join whose rewrite matches every row of its left side on its own ({@link
 * SemiJoinIds#perRow}: EXISTS with {@code a.x <> b.x}, beside equal keys or not) put back above
 * the inner joins, filters, projections and semi and anti joins over its left side. Spark pushes
 * such a predicate down to the table it reads (TPC-DS 16 and 94: to all of catalog_sales, before
 * the joins with three dimensions keep a few thousand of its rows), which costs plain Spark a hash
 * probe a row; the rewrite numbers each row it is given, joins it and groups it again, so it is
 * given the rows the joins kept. A semi join keeps or drops a left row by that row's own columns,
 * so it commutes with those operators, and a row's lineage (its own rows and the right rows it
 * matched) is the same either way. Its condition's columns are kept through the projections it is
 * moved over, and the rows above it have their columns as before.
 */
final class LateSemiJoins {
    private LateSemiJoins() {
    }

    /** {@code plan} with each such semi join as late as it can be. */
    static LogicalPlan of(LogicalPlan plan) {
        return placed(plan);
    }

    /** A semi join moved up, to be applied over the plan it was moved above. */
    private record Pending(Expression condition, LogicalPlan right, JoinHint hint) {
    }

    /** A plan, and the semi joins moved up to its top (in order, the first innermost). */
    private record Lifted(LogicalPlan plan, List<Pending> pending) {
    }

    private static boolean late(LogicalPlan node) {
        return node instanceof Join join && join.joinType() == LeftSemi$.MODULE$ && SemiJoinIds.perRow(join);
    }

    /** {@code node} with the semi joins of its subtree applied at its top, its columns as they were. */
    private static LogicalPlan placed(LogicalPlan node) {
        Lifted lifted = lifted(node);
        if (lifted.pending().isEmpty()) {
            return lifted.plan();
        }
        LogicalPlan out = lifted.plan();
        for (Pending p : lifted.pending()) {
            out = new Join(out, p.right(), LeftSemi$.MODULE$, Option.apply(p.condition()), p.hint());
        }
        if (out.output().size() != node.output().size()) {
            out = new Project(Scala.seq(new ArrayList<NamedExpression>(Scala.list(node.output()))), out);
        }
        return out;
    }

    private static Lifted lifted(LogicalPlan node) {
        if (late(node)) {
            Join join = (Join) node;
            Lifted left = lifted(join.left());
            List<Pending> pending = new ArrayList<>(left.pending());
            pending.add(new Pending(join.condition().get(), placed(join.right()), join.hint()));
            return new Lifted(left.plan(), pending);
        }
        if (node instanceof Filter filter) {
            Lifted child = lifted(filter.child());
            return child.pending().isEmpty() ? new Lifted(same(node, child.plan()), List.of())
                    : new Lifted(new Filter(filter.condition(), child.plan()), child.pending());
        }
        if (node instanceof Project project) {
            Lifted child = lifted(project.child());
            if (child.pending().isEmpty()) {
                return new Lifted(same(node, child.plan()), List.of());
            }
            List<NamedExpression> list = new ArrayList<>(Scala.list(project.projectList()));
            Set<ExprId> kept = new HashSet<>();
            for (Attribute a : Scala.list(project.output())) {
                kept.add(a.exprId());
            }
            AttributeSet below = child.plan().outputSet();
            for (Pending p : child.pending()) {
                for (Attribute a : Scala.list(p.condition().references().toSeq())) {
                    if (below.contains(a) && kept.add(a.exprId())) {
                        list.add(a);
                    }
                }
            }
            return new Lifted(new Project(Scala.seq(list), child.plan()), child.pending());
        }
        if (node instanceof Join join && passes(join.joinType())) {
            boolean inner = join.joinType() == Inner$.MODULE$ || join.joinType() == Cross$.MODULE$;
            Lifted left = lifted(join.left());
            Lifted right = inner ? lifted(join.right()) : new Lifted(placed(join.right()), List.of());
            List<Pending> pending = new ArrayList<>(left.pending());
            pending.addAll(right.pending());
            Join out = new Join(left.plan(), right.plan(), join.joinType(), join.condition(), join.hint());
            return new Lifted(pending.isEmpty() ? same(node, left.plan(), right.plan()) : out, pending);
        }
        List<LogicalPlan> children = new ArrayList<>();
        for (LogicalPlan child : Scala.list(node.children())) {
            children.add(placed(child));
        }
        return new Lifted(same(node, children.toArray(new LogicalPlan[0])), List.of());
    }

    /** Joins a semi join on their left side moves over (an inner join's right side too). */
    private static boolean passes(JoinType type) {
        return type == Inner$.MODULE$ || type == Cross$.MODULE$ || type == LeftSemi$.MODULE$
                || type == LeftAnti$.MODULE$;
    }

    /** {@code node} over {@code children}: itself when they are its own. */
    private static LogicalPlan same(LogicalPlan node, LogicalPlan... children) {
        List<LogicalPlan> had = Scala.list(node.children());
        boolean unchanged = had.size() == children.length;
        for (int i = 0; unchanged && i < children.length; i++) {
            unchanged = had.get(i) == children[i];
        }
        return unchanged ? node : node.withNewChildren(Scala.seq(List.of(children)));
    }
}
