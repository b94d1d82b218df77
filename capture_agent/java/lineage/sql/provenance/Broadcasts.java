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
 */
final class Broadcasts {
    private Broadcasts() {
    }

    /** The hint of {@code join}'s rewrite (its sides as they were in the query). */
    static JoinHint hint(Join join) {
        JoinHint hint = join.hint();
        long threshold = SQLConf.get().autoBroadcastJoinThreshold();
        if (threshold < 0 || hint.leftHint().isDefined() || hint.rightHint().isDefined()) {
            return hint;
        }
        BigInt limit = BigInt.apply(threshold);
        BigInt leftSize = join.left().stats().sizeInBytes();
        BigInt rightSize = join.right().stats().sizeInBytes();
        boolean left = buildsLeft(join.joinType()) && leftSize.compare(limit) <= 0;
        boolean right = buildsRight(join.joinType()) && rightSize.compare(limit) <= 0;
        if (!left && !right) {
            return hint;
        }
        Option<HintInfo> broadcast = Option.apply(new HintInfo(Option.apply(BROADCAST$.MODULE$)));
        return right && (!left || rightSize.compare(leftSize) <= 0) ? new JoinHint(Option.empty(), broadcast)
                : new JoinHint(broadcast, Option.empty());
    }

    private static boolean buildsLeft(JoinType type) {
        return type == Inner$.MODULE$ || type == Cross$.MODULE$ || type == RightOuter$.MODULE$;
    }

    private static boolean buildsRight(JoinType type) {
        return type == Inner$.MODULE$ || type == Cross$.MODULE$ || type == LeftOuter$.MODULE$
                || type == LeftSemi$.MODULE$ || type == LeftAnti$.MODULE$ || type instanceof ExistenceJoin;
    }
}
