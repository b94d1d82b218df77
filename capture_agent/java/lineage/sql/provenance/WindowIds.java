package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import lineage.sql.TapGroup;
import lineage.sql.TapPrefix;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.CurrentRow$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.RangeFrame$;
import org.apache.spark.sql.catalyst.expressions.RowFrame$;
import org.apache.spark.sql.catalyst.expressions.SpecifiedWindowFrame;
import org.apache.spark.sql.catalyst.expressions.UnboundedFollowing$;
import org.apache.spark.sql.catalyst.expressions.UnboundedPreceding$;
import org.apache.spark.sql.catalyst.expressions.WindowExpression;
import org.apache.spark.sql.catalyst.expressions.WindowSpecDefinition;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Window;

/**
 * A windowed row holds its own ids and those of every row of its windows' frames as Spark
 * resolved them (a running sum: the rows up to it; rank, row_number: the rows ordered before it;
 * lag and lead: the row at the offset), or of its whole window partition where the value depends
 * on it all (cume_dist, percent_rank, ntile, frames unbounded both ways): the union of the frame's
 * sets, a window aggregate over the same partition, order and frame, beside Spark's own. Where one
 * value depends on the whole partition, a row's lineage is its partition, which a tap writes once
 * ({@link #tapped}); where every value depends on the rows up to it, a prefix of its partition,
 * which a tap writes a place a row (both {@link #tapped}).
 */
final class WindowIds implements OperatorRewrite {
    static final Set<String> WHOLE_PARTITION = Set.of("CumeDist", "PercentRank", "NTile");

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Window;
    }

    @Override
    public String refuses(LogicalPlan node) {
        for (NamedExpression e : Scala.list(((Window) node).windowExpressions())) {
            if (!(e instanceof Alias alias && alias.child() instanceof WindowExpression)) {
                return "a window expression that is not an aliased window function";
            }
        }
        return null;
    }

    /** Whether a lineage frame ({@link #lineage}) is the whole window partition. */
    static boolean whole(WindowSpecDefinition spec) {
        return spec.frameSpecification() instanceof SpecifiedWindowFrame frame
                && frame.lower() == UnboundedPreceding$.MODULE$ && frame.upper() == UnboundedFollowing$.MODULE$;
    }

    /** Whether a lineage frame is its partition's rows up to the current row (with {@code RANGE}, its
     * peers too): a running sum's, rank's. */
    static boolean prefix(WindowSpecDefinition spec) {
        return spec.frameSpecification() instanceof SpecifiedWindowFrame frame
                && frame.lower() == UnboundedPreceding$.MODULE$ && frame.upper() == CurrentRow$.MODULE$;
    }

    /**
     * A window whose rows' lineage a tap the window's tasks write once gives, as a combiner point
     * (as an aggregate's map tasks do): a long a row rather than a set of ids copied into each row.
     * Over {@code frame}, the whole partition ({@link #whole}): one of its values depends on the whole
     * partition, so each row's lineage is its partition's rows (every frame is in it), and the row
     * holds the partition's id (the 63-bit hash of its partition columns, as an aggregate's group;
     * TPC-DS 47, 57: a year's months). Over a running frame ({@link #prefix}): every value is computed
     * from the partition's rows up to the row, a prefix of its partition, which the tap writes a place
     * for each row ({@link TapPrefix}), and the row holds the id of its frame's last place (TPC-DS 51:
     * cumulative sums, then cumulative maxima over them; with frames of rows and of ranges together,
     * the range's, which holds the other).
     */
    private static Carried tapped(Window window, WindowSpecDefinition frame, Carried child, Rewriter.Taken tap,
            List<NamedExpression> expressions, List<NamedExpression> out, Rewriter rewriter) {
        Expression hash = AggregateIds.groupHash(Scala.list(window.partitionSpec()), rewriter);
        List<Expression> ids = new ArrayList<>(child.slotAttributes());
        Expression function = whole(frame) ? TapGroup.function(tap.tap(), hash, ids)
                : TapPrefix.function(tap.tap(), hash, ids);
        Alias lineage = rewriter.alias(new WindowExpression(function, frame), rewriter.fresh());
        expressions.add(lineage);
        out.add(lineage.toAttribute());
        Window plan = new Window(Scala.seq(expressions), window.partitionSpec(), window.orderSpec(), child.plan(),
                window.hint());
        Slot slot = new Slot(tap.point(), lineage.toAttribute(), false);
        return new Carried(new Project(Scala.seq(out), plan), List.of(slot), "sum");
    }

    /** The frame whose rows a window expression's value is computed from. */
    static WindowSpecDefinition lineage(WindowExpression window) {
        WindowSpecDefinition spec = window.windowSpec();
        String function = window.windowFunction().getClass().getSimpleName();
        if (!WHOLE_PARTITION.contains(function) && spec.frameSpecification() instanceof SpecifiedWindowFrame
                && !whole(spec)) {
            return spec;
        }
        SpecifiedWindowFrame all = new SpecifiedWindowFrame(RowFrame$.MODULE$, UnboundedPreceding$.MODULE$,
                UnboundedFollowing$.MODULE$);
        return new WindowSpecDefinition(spec.partitionSpec(), spec.orderSpec(), all);
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Window window = (Window) node;
        Carried child = children.get(0);
        List<WindowSpecDefinition> frames = new ArrayList<>();
        for (NamedExpression e : Scala.list(window.windowExpressions())) {
            WindowSpecDefinition frame = lineage((WindowExpression) ((Alias) e).child());
            if (!frames.contains(frame)) {
                frames.add(frame);
            }
        }
        List<NamedExpression> expressions = new ArrayList<>(Scala.list(window.windowExpressions()));
        List<NamedExpression> out = new ArrayList<>(Scala.list(node.output()));
        WindowSpecDefinition whole = frames.stream().filter(WindowIds::whole).findFirst().orElse(null);
        if (whole != null) {
            Rewriter.Taken tap = rewriter.windowTapFor(child.slots());
            if (tap != null) {
                return tapped(window, whole, child, tap, expressions, out, rewriter);
            }
        }
        if (!frames.isEmpty() && frames.stream().allMatch(WindowIds::prefix)) {
            WindowSpecDefinition widest = frames.stream()
                    .filter(f -> ((SpecifiedWindowFrame) f.frameSpecification()).frameType() == RangeFrame$.MODULE$)
                    .findFirst().orElse(frames.get(0));
            Rewriter.Taken tap = rewriter.prefixTapFor(child.slots());
            if (tap != null) {
                return tapped(window, widest, child, tap, expressions, out, rewriter);
            }
        }
        List<Slot> slots = new ArrayList<>();
        for (Slot slot : child.slots()) {
            Expression ids = rewriter.asSet(slot);
            for (WindowSpecDefinition frame : frames) {
                Expression gathered = rewriter.union(rewriter.asSet(slot)).toAggregateExpression();
                Alias over = rewriter.alias(new WindowExpression(gathered, frame), rewriter.fresh());
                expressions.add(over);
                ids = rewriter.or(ids, over.toAttribute());
            }
            Alias merged = rewriter.alias(ids, rewriter.fresh());
            out.add(merged);
            slots.add(slot.as(merged.toAttribute(), true));
        }
        Window plan = new Window(Scala.seq(expressions), window.partitionSpec(), window.orderSpec(), child.plan(),
                window.hint());
        return new Carried(new Project(Scala.seq(out), plan), slots, "sum");
    }
}
