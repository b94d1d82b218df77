package lineage.sql.provenance;

import com.google.common.collect.MapMaker;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.LogicalRDD;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;

/**
 * What a leaf reads, as a name for the object that holds it: a table of the data source API (the
 * agent's own readers' tables among them), an RDD, a relation of files. The Python side names each
 * captured source it makes by the leaves of its plan ({@code frame_sources.sourced}); a query over
 * a captured DataFrame's rows (a view of it, {@code lc.sql}) then reads that source again, with
 * its ids, as its leaf. The analyzer and optimizer copy leaves but keep what they read, so the
 * name survives them. Names are made once per object and never reused (weakly held). Objects
 * are told apart by identity, not {@code equals}: two reads of one path make tables that are equal
 * (so that Spark reuses an exchange over both) but are two sources, and a name held by an equal
 * object would change when that object is collected (Guava's weak keys compare with {@code ==}).
 */
public final class LeafIdentity {
    private static final Map<Object, String> NAMES = new MapMaker().weakKeys().makeMap();
    private static final AtomicLong MADE = new AtomicLong();

    private LeafIdentity() {
    }

    /** The name of what {@code leaf} reads, or null for a leaf of any other kind. */
    public static String of(LogicalPlan leaf) {
        Object held = held(leaf);
        if (held == null) {
            return null;
        }
        return NAMES.computeIfAbsent(held, o -> o.getClass().getSimpleName() + "#" + MADE.incrementAndGet());
    }

    /** The names of the leaves of {@code plan} that have one. */
    public static String[] inPlan(LogicalPlan plan) {
        return Scala.list(plan.collectLeaves()).stream().map(LeafIdentity::of)
            .filter(java.util.Objects::nonNull).toArray(String[]::new);
    }

    /** Whether {@code leaf} is a table of the data source API: only a captured source makes it readable. */
    static boolean isTable(LogicalPlan leaf) {
        return leaf instanceof DataSourceV2Relation || leaf instanceof DataSourceV2ScanRelation;
    }

    private static Object held(LogicalPlan leaf) {
        if (leaf instanceof DataSourceV2ScanRelation scan) {
            return scan.relation().table();
        }
        if (leaf instanceof DataSourceV2Relation relation) {
            return relation.table();
        }
        if (leaf instanceof LogicalRDD rdd) {
            return rdd.rdd();
        }
        if (leaf instanceof LogicalRelation relation) {
            return relation.relation();
        }
        return null;
    }
}
