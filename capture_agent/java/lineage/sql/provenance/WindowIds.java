package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import lineage.sql.TapGroup;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.CurrentRow$;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
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
 * ({@link #tapped}).
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

    /**
     * A window one of whose values depends on its whole partition: each row's lineage is its
     * partition's rows (every frame is in it), so the row holds the partition's id in a tap (the
     * 63-bit hash of its partition columns, as an aggregate's group), which the window's tasks
     * write as the tables of a combiner point, as an aggregate's map tasks do: a long a row rather
     * than a set of the partition's ids copied into each of its rows (TPC-DS 47, 57: a year's months).
     */
    private static Carried tapped(Window window, WindowSpecDefinition whole, Carried child, Rewriter.Taken tap,
            List<NamedExpression> expressions, List<NamedExpression> out, Rewriter rewriter) {
        Expression hash = AggregateIds.groupHash(Scala.list(window.partitionSpec()), rewriter);
        Expression function = TapGroup.function(tap.tap(), hash, new ArrayList<>(child.slotAttributes()));
        Alias partition = rewriter.alias(new WindowExpression(function, whole), rewriter.fresh());
        expressions.add(partition);
        out.add(partition.toAttribute());
        Window plan = new Window(Scala.seq(expressions), window.partitionSpec(), window.orderSpec(), child.plan(),
                window.hint());
        Slot slot = new Slot(tap.point(), partition.toAttribute(), false);
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
