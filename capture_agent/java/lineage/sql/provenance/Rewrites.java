package lineage.sql.provenance;

import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/** The registry of operator rewrites: the first that accepts an operator rewrites it. */
final class Rewrites {
    private Rewrites() {
    }

    static final List<OperatorRewrite> ALL = List.of(
            new SourceLeaf(), new NoRowsLeaf(), new PassThrough(), new ProjectIds(), new FilterIds(),
            new AggregateIds(), new JoinIds(), new SemiJoinIds(), new UnionIds(), new ExpandIds(), new WindowIds());

    static OperatorRewrite of(LogicalPlan node) {
        OperatorRewrite rewrite = find(node);
        if (rewrite == null) {
            throw new Refused(node.nodeName(), "no provenance rewrite of this operator yet");
        }
        return rewrite;
    }

    /** The rewrite that accepts {@code node}, or null. */
    private static OperatorRewrite find(LogicalPlan node) {
        for (OperatorRewrite r : ALL) {
            if (r.accepts(node)) {
                return r;
            }
        }
        return null;
    }

    /** Why the plan cannot be rewritten (the first operator or expression refused), or null. */
    static String refusal(LogicalPlan plan, java.util.function.Predicate<LogicalPlan> isSource) {
        for (LogicalPlan child : Scala.list(plan.children())) {
            String why = refusal(child, isSource);
            if (why != null) {
                return why;
            }
        }
        if (plan.children().isEmpty() && !isSource.test(plan) && !NoRowsLeaf.isNoRows(plan)) {
            return plan.nodeName() + ": a source the agent cannot read with ids";
        }
        OperatorRewrite rewrite = find(plan);
        if (rewrite == null) {
            return plan.nodeName() + ": no provenance rewrite of this operator yet";
        }
        String why = rewrite.refuses(plan);
        if (why != null) {
            return plan.nodeName() + ": " + why;
        }
        for (org.apache.spark.sql.catalyst.expressions.ScalarSubquery sq : SubqueryIds.of(plan)) {
            String inner = refusal(sq.plan(), isSource);
            if (inner != null) {
                return inner;
            }
        }
        for (Expression e : Scala.list(plan.expressions())) {
            String subquery = Expressions.subquery(e);
            if (subquery != null) {
                return plan.nodeName() + ": " + subquery;
            }
        }
        return null;
    }
}
