package lineage.sql.provenance;

import java.util.List;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * The provenance rewrite of one kind of logical operator (Perm and GProM: one rewrite per
 * operator): given the operator and its children already rewritten, the operator computing the
 * same rows, each with the ids of the source rows it was computed from.
 */
interface OperatorRewrite {

    /** Whether this rewrite is the one of {@code node}. */
    boolean accepts(LogicalPlan node);

    /** Why {@code node}, which this rewrite accepts, cannot be carried (null: it can). */
    default String refuses(LogicalPlan node) {
        return null;
    }

    Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter);

    /**
     * Whether this rewrite takes children whose slots may be lists ({@link Slot#list}); the
     * children of one that does not have their lists made sets first ({@link Rewriter#setsForLists}).
     */
    default boolean takesLists() {
        return false;
    }
}
