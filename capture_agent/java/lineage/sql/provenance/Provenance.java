package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Window;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;

/**
 * The provenance rewrite of one query's optimized plan (what the Python side calls): {@link
 * #refused} says whether it can be captured, {@link #leaves} are the sources it reads, which the
 * Python side makes captured sources of (their rows with ids), and {@link #rewrite} gives the
 * query computing the same rows, each with one hidden column per source: the id of the source row
 * it was computed from, or the set of ids (a Roaring bitmap) where several made it. Expressions
 * stay Catalyst's own; Spark plans and runs the rewritten query as any other.
 */
public final class Provenance {
    private final SparkSession session;
    private final LogicalPlan plan;
    private final List<LogicalPlan> leaves = new ArrayList<>();
    private int taps;
    private Carried carried;
    private List<List<String>> tapped = List.of();
    private java.util.Set<Integer> prefixes = java.util.Set.of();

    public Provenance(SparkSession session, LogicalPlan plan) {
        this.session = session;
        this.plan = LateSemiJoins.of(CachedPlans.expand(session, plan));
        collect(this.plan);
    }

    private void collect(LogicalPlan node) {
        if (node instanceof Aggregate || node instanceof Window || new SemiJoinIds().accepts(node)) {
            taps++;
        }
        if (SourceLeaf.isReadable(node)) {
            for (LogicalPlan known : leaves) {
                if (known == node) {
                    return;
                }
            }
            leaves.add(node);
        }
        for (LogicalPlan child : Scala.list(node.children())) {
            collect(child);
        }
        for (org.apache.spark.sql.catalyst.expressions.ScalarSubquery sq : SubqueryIds.of(node)) {
            collect(sq.plan());
        }
    }

    /** Why the query cannot be captured (the operator that stops it, and why), or null. */
    public String refused() {
        return Rewrites.refusal(plan, SourceLeaf::isReadable);
    }

    public List<LogicalPlan> leaves() {
        return leaves;
    }

    /** The aggregates, windows and semi joins of the plan (its subqueries' too): at most this many
     * taps ({@link #rewrite}). */
    public int taps() {
        return taps;
    }

    public Map<String, String> describe(int leaf) {
        return SourceLeaf.describe(leaves.get(leaf));
    }

    /** The query rewritten, leaf {@code i} read from {@code plans[i]} (its columns, then its ids in
     * column {@code idColumns[i]}: the ids of source {@code sources[i]}); its columns the query's,
     * then the hidden ones ({@link #slotColumns}). The aggregates, windows and semi joins that can be
     * tapped take the combiner points {@code tapDirs[j]}, {@code tapIds[j]} in turn ({@link #tapped}).
     *
     * @throws Refused an operator cannot be carried */
    public Dataset<Row> rewrite(LogicalPlan[] plans, String[] idColumns, String[] sources, String[] tapDirs,
            String[] tapIds) {
        IdentityHashMap<LogicalPlan, Rewriter.Source> made = new IdentityHashMap<>();
        for (int i = 0; i < plans.length; i++) {
            made.put(leaves.get(i), new Rewriter.Source(plans[i], idColumns[i], sources[i]));
        }
        List<Rewriter.TapPoint> taps = new ArrayList<>();
        for (int j = 0; j < tapDirs.length; j++) {
            taps.add(new Rewriter.TapPoint(tapDirs[j], tapIds[j]));
        }
        Rewriter rewriter = new Rewriter(session, plan, made, taps);
        carried = rewriter.setsForLists(rewriter.carry(plan));
        tapped = rewriter.tapped;
        prefixes = rewriter.prefixes;
        List<NamedExpression> list = new ArrayList<>(Scala.list(plan.output()));
        list.addAll(carried.slotAttributes());
        return Dataset.ofRows(session, new Project(Scala.seq(list), carried.plan()));
    }

    /** The sources of the ids each tap the rewrite took was given (tap {@code j}: {@code
     * tapIds[j]}), the parents of its combiner point; the points past these were not used. */
    public String[][] tapped() {
        return tapped.stream().map(sources -> sources.toArray(new String[0])).toArray(String[][]::new);
    }

    /** Per tap the rewrite took ({@link #tapped}): whether its point's rows are the places of a
     * window's partitions ({@code lineage.sql.TapPrefix}: read as prefixes), not groups. */
    public boolean[] prefixTaps() {
        boolean[] out = new boolean[tapped.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = prefixes.contains(i);
        }
        return out;
    }

    public String[] slotColumns() {
        return carried.slots().stream().map(s -> s.attribute().name()).toArray(String[]::new);
    }

    public String[] slotSources() {
        return carried.slots().stream().map(Slot::source).toArray(String[]::new);
    }

    public boolean[] slotSets() {
        boolean[] out = new boolean[carried.slots().size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = carried.slots().get(i).set();
        }
        return out;
    }

    public String rule() {
        return carried.rule();
    }
}
