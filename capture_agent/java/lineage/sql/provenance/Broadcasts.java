package lineage.sql.provenance;

import org.apache.spark.sql.catalyst.plans.Cross$;
import org.apache.spark.sql.catalyst.plans.ExistenceJoin;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.logical.BROADCAST$;
import org.apache.spark.sql.catalyst.plans.logical.HintInfo;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.JoinHint;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.statsEstimation.EstimationUtils;
import org.apache.spark.sql.internal.SQLConf;
import scala.Option;
import scala.math.BigInt;

/**
 * The broadcast Spark plans for a join, kept for its rewrite. Spark broadcasts a side whose
 * estimated size is within {@code spark.sql.autoBroadcastJoinThreshold} (the smaller, when both
 * are); the rewritten side carries ids, and sets whose estimated size (a binary column's default)
 * can take it past the threshold, so Spark planned a shuffle of both sides where it had broadcast
 * one (TPC-DS 70: store_sales' 541,000 rows of a year shuffled to join the dozen stores an IN
 * keeps). A rewritten join asks for the broadcast of the side Spark would broadcast in the join as
 * written; a join with a hint of its own keeps it. A hint changes how Spark runs the join, never
 * its rows.
 *
 * <p>A side whose rewrite carries sets (rows of a join with an IN's or an INTERSECT's groups) is
 * asked for only when it has few rows ({@link #SET_ROWS}, by Spark's estimate of the side as
 * written): a set's bytes are not in that estimate, and a side of many rows can carry the same
 * large set many times (TPC-DS 14: every item of a brand, class and category with the set of that
 * combination's sales rows, some hundreds of MB), which the driver cannot build into a broadcast.
 * The other side is then asked for when Spark could broadcast it (within the threshold, a build
 * side of the join type, few rows if it carries sets too); else the join has no hint.
 */
final class Broadcasts {
    /** Rows (Spark's estimate) a side carrying sets has at most to be asked for as the broadcast. */
    static final long SET_ROWS = 1000;

    private Broadcasts() {
    }

    /** The hint of {@code join}'s rewrite (its sides as they were in the query), neither side carrying sets. */
    static JoinHint hint(Join join) {
        return hint(join, false, false);
    }

    /** The hint of {@code join}'s rewrite, {@code leftSets} and {@code rightSets} saying which sides carry sets. */
    static JoinHint hint(Join join, boolean leftSets, boolean rightSets) {
        JoinHint hint = join.hint();
        long threshold = SQLConf.get().autoBroadcastJoinThreshold();
        if (threshold < 0 || hint.leftHint().isDefined() || hint.rightHint().isDefined()) {
            return hint;
        }
        BigInt limit = BigInt.apply(threshold);
        BigInt leftSize = join.left().stats().sizeInBytes();
        BigInt rightSize = join.right().stats().sizeInBytes();
        boolean left = buildsLeft(join.joinType()) && leftSize.compare(limit) <= 0 && (!leftSets || few(join.left()));
        boolean right = buildsRight(join.joinType()) && rightSize.compare(limit) <= 0
                && (!rightSets || few(join.right()));
        if (!left && !right) {
            return hint;
        }
        Option<HintInfo> broadcast = Option.apply(new HintInfo(Option.apply(BROADCAST$.MODULE$)));
        return right && (!left || rightSize.compare(leftSize) <= 0) ? new JoinHint(Option.empty(), broadcast)
                : new JoinHint(broadcast, Option.empty());
    }

    /** Whether Spark estimates {@code side} at {@link #SET_ROWS} rows or fewer (its row count, else
     * its size over its row's size as Spark's estimation gives it). */
    private static boolean few(LogicalPlan side) {
        Option<BigInt> counted = side.stats().rowCount();
        if (counted.isDefined()) {
            return counted.get().compare(BigInt.apply(SET_ROWS)) <= 0;
        }
        BigInt row = EstimationUtils.getSizePerRow(side.output(), EstimationUtils.getSizePerRow$default$2());
        return side.stats().sizeInBytes().compare(BigInt.apply(SET_ROWS).$times(row)) <= 0;
    }

    private static boolean buildsLeft(JoinType type) {
        return type == Inner$.MODULE$ || type == Cross$.MODULE$ || type == RightOuter$.MODULE$;
    }

    private static boolean buildsRight(JoinType type) {
        return type == Inner$.MODULE$ || type == Cross$.MODULE$ || type == LeftOuter$.MODULE$
                || type == LeftSemi$.MODULE$ || type == LeftAnti$.MODULE$ || type instanceof ExistenceJoin;
    }
}
