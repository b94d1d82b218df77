package lineage.sql;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongBinaryOperator;
import java.util.function.ToLongBiFunction;

import org.apache.hadoop.fs.Path;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.Invoke;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.ObjectType;
import org.roaringbitmap.longlong.LongIterator;

import scala.jdk.javaapi.CollectionConverters;

/**
 * The map side of a captured DataFrame aggregate. The aggregate function {@code lineage_tap(hash,
 * ids...)} ({@link #grouped}, {@link TapGroup}) is the row's group, a 63-bit hash of its group
 * columns kept in the aggregation buffer, and calls the tap with it and the row's ids ({@link
 * #call}); the tap remembers, per task, which record ids of each source went into which group:
 * while the task has seen at most {@link TapFew#FEW} groups, a byte at the id's place in a window
 * of its file's ids while they come dense, as a scan gives them ({@link TapWindow}: the groups'
 * bitmaps are built from the bytes at the end), else an append to the group's own list, folded
 * into its bitmaps {@link TapGroupIds#FOLD} ids at a time ({@link TapFew}, {@link TapGroupIds},
 * {@link TapFolded}); past that, a row costs two appends to arrays (no lookup, which a task
 * of many groups would pay in cache misses), sorted by group once, at the end, in buckets of the
 * group's top bits ({@link TapPairs}, {@link TapBuckets}). When the task ends well it writes them
 * as one Parquet table, {@code <dir>/part-<partition>.parquet} ({@link TapTable}): rows ({@link
 * TapRow}; out_id: the group, in_ids_0, in_ids_1...: the ids of each source), sorted by group (the
 * ``frame_groups`` layout of the record engine). A source's ids are a list (sorted) when the
 * task's groups hold fewer than {@link TapTable#SET_IDS} rows each on average, else a Roaring
 * bitmap (portable 64-bit format, {@link IdSets#sorted}): a few large groups, as in a report by
 * flag or by month, build a bitmap for a few nanoseconds an id where Parquet's list writer costs
 * ten times that. The aggregate itself stays Spark's own, a code-generated hash aggregate, which
 * calls the tap once for every row it aggregates (filters the optimizer pushes below it included).
 *
 * <p>A task that fails writes nothing; a task run again (a retry, a recomputed stage, a second
 * action over the same frame) writes its partition's table again over the first, with the same rows.
 *
 * <p>This class is what plans hold (it and its {@link Link}s are serialized into them and shipped
 * to executors); the task's collectors ({@code TapPairs} and the classes it uses) are transient,
 * made in the task by {@link #add}.
 */
public final class Tap implements Serializable {
    private static final long serialVersionUID = 1L;
    /** Sources whose ids one tap takes at most (a row's ids past the third go through {@link #held}). */
    public static final int MAX_SOURCES = 32;
    /** A job with this local property "true" (a what-if replay) runs the taps without writing. */
    public static final String OFF = "lineage.taps.off";

    private final String dir;
    private final int slots;
    private transient TapPairs pairs;
    /** A row of one source's id, the others none ({@link #addOne}), made when first needed. */
    private transient long[] one;
    /** The ids of the row the tap is at, of the sources before the last (the last's too past three). */
    private final long[] held;

    public Tap(String dir, int slots) {
        if (slots < 1 || slots > MAX_SOURCES) {
            throw new IllegalArgumentException("a tap takes 1 to " + MAX_SOURCES + " sources, not " + slots);
        }
        this.dir = dir;
        this.slots = slots;
        this.held = new long[slots];
    }

    /**
     * The expression {@code tap(group, ids...)} over {@code slots} id expressions (1 to {@link
     * #MAX_SOURCES}): {@code group}, the tap remembering the row's ids. It is Spark's own {@code
     * Invoke} of {@link Link}s, one per source, nested (the innermost first): generated code calls
     * each with primitive longs,
     * nothing boxed; the calls go through {@link LongBinaryOperator} (a JDK type) because the code
     * is compiled where this jar's classes are not seen (the driver checks a stage's code). A null
     * group is 0, a null id -1 (none: an outer join's missing side). A source whose expression is
     * binary holds sets of ids (a Roaring bitmap, {@link IdSets}), and one that is an array a list
     * of ids (a source joined with itself): its call is a {@link SetLink} (through {@link
     * ToLongBiFunction}, the group boxed), which adds each id of the row's set or list.
     */
    Expression call(Expression group, Expression[] ids) {
        if (ids.length != slots) {
            throw new IllegalArgumentException("a tap of " + slots + " sources given " + ids.length + " ids");
        }
        Expression call = new Coalesce(CollectionConverters.asScala(List.of(group, lit(0L))).toSeq());
        for (int s = 0; s < slots; s++) {
            if (ids[s].dataType() instanceof BinaryType || ids[s].dataType() instanceof ArrayType) {
                Literal link = new Literal(new SetLink(this, s), new ObjectType(ToLongBiFunction.class));
                call = new Invoke(link, "applyAsLong", DataTypes.LongType,
                        CollectionConverters.asScala(List.of(call, ids[s])).toSeq(),
                        CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(),
                        false, false, true);
                continue;
            }
            Expression id = new Coalesce(CollectionConverters.asScala(List.of(ids[s], lit(-1L))).toSeq());
            Literal link = new Literal(new Link(this, s), new ObjectType(LongBinaryOperator.class));
            call = new Invoke(link, "applyAsLong", DataTypes.LongType,
                    CollectionConverters.asScala(List.of(call, id)).toSeq(),
                    CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(),
                    false, false, true);
        }
        return call;
    }

    private static Expression lit(long value) {
        return Literal.create(value, DataTypes.LongType);
    }

    /**
     * Source {@code s}'s call of the tap: {@code applyAsLong(group, id)} returns the group; the last
     * source's call adds the row (the ids the earlier calls of the row kept in {@link #held}).
     */
    static final class Link implements LongBinaryOperator, Serializable {
        private static final long serialVersionUID = 1L;
        private final Tap tap;
        private final int source;

        Link(Tap tap, int source) {
            this.tap = tap;
            this.source = source;
        }

        @Override
        public long applyAsLong(long group, long id) {
            Tap t = tap;
            if (t.slots == 1) {  // one source: most rows of few groups are a byte written (TapFew#marked)
                TapPairs p = t.pairs;
                TapFew few = p == null ? null : p.few;
                if (few != null && few.marked(group, id)) {
                    return group;
                }
                return t.add(group, id, -1L, -1L);
            }
            if (source + 1 < t.slots) {
                t.held[source] = id;
                return group;
            }
            switch (source) {
                case 0:
                    return t.add(group, id, -1L, -1L);
                case 1:
                    return t.add(group, t.held[0], id, -1L);
                case 2:
                    return t.add(group, t.held[0], t.held[1], id);
                default:
                    t.held[source] = id;
                    return t.addRow(group, t.held);
            }
        }

        @Override
        public String toString() {
            return "lineage_tap(" + tap.dir + ", source " + source + ")";
        }
    }

    /**
     * Source {@code s}'s call when its column holds sets or lists: {@code applyAsLong(group, ids)}
     * adds each id of the row's set or list (null: none; a null in a list: none) as a row of that
     * source alone and returns the group; the row's other ids are added by the last source's call
     * (here, when it is the last), this source's place among them none. A row repeating the
     * previous row's group and set adds nothing (the same ids again), nor does an id of a list
     * among the last {@link #RECENT} this call added to the same group (a self-join's rows of one
     * key repeat each other's ids: TPC-DS 95's orders, each line paired with every other).
     */
    static final class SetLink implements ToLongBiFunction<Object, Object>, Serializable {
        private static final long serialVersionUID = 1L;
        static final int RECENT = 16;
        private final Tap tap;
        private final int source;
        private transient long lastGroup;
        private transient byte[] lastSet;
        /** The last ids of lists added to {@link #lastGroup} ({@link #recentCount} of them, a ring). */
        private transient long[] recent;
        private transient int recentCount;
        private transient int recentNext;

        SetLink(Tap tap, int source) {
            this.tap = tap;
            this.source = source;
        }

        @Override
        public long applyAsLong(Object boxed, Object set) {
            long group = (Long) boxed;
            Tap t = tap;
            t.held[source] = -1L;
            if (set instanceof ArrayData list) {
                addList(t, group, list);
            } else if (set != null && (group != lastGroup || !Arrays.equals((byte[]) set, lastSet))) {
                lastGroup = group;
                lastSet = (byte[]) set;
                LongIterator ids = IdSets.read(lastSet).getLongIterator();
                while (ids.hasNext()) {
                    t.addOne(group, source, ids.next());
                }
            }
            if (source + 1 == t.slots) {
                t.addHeld(group);
            }
            return group;
        }

        private void addList(Tap t, long group, ArrayData list) {
            if (recent == null) {
                recent = new long[RECENT];
            }
            if (group != lastGroup || lastSet != null) {
                lastGroup = group;
                lastSet = null;
                recentCount = 0;
                recentNext = 0;
            }
            for (int i = 0, n = list.numElements(); i < n; i++) {
                if (!list.isNullAt(i) && !seen(list.getLong(i))) {
                    t.addOne(group, source, list.getLong(i));
                }
            }
        }

        /** Whether {@code id} is among the recent ids of the group; if not, it is now. */
        private boolean seen(long id) {
            for (int k = 0; k < recentCount; k++) {
                if (recent[k] == id) {
                    return true;
                }
            }
            recent[recentNext] = id;
            recentNext = (recentNext + 1) % RECENT;
            recentCount = Math.min(recentCount + 1, RECENT);
            return false;
        }

        @Override
        public String toString() {
            return "lineage_tap_sets(" + tap.dir + ", source " + source + ")";
        }
    }

    /** A row of source {@code s}'s {@code id} alone (past three sources, in {@link #one}, which the
     * collectors read and do not keep, as {@link #held}). */
    private void addOne(long group, int s, long id) {
        if (slots <= 3) {
            add(group, s == 0 ? id : -1L, s == 1 ? id : -1L, s == 2 ? id : -1L);
            return;
        }
        long[] row = one;
        if (row == null) {
            row = new long[slots];
            Arrays.fill(row, -1L);
            one = row;
        }
        row[s] = id;
        addRow(group, row);
        row[s] = -1L;
    }

    /** The ids the row's earlier calls kept ({@link #held}), when any is not none. */
    private void addHeld(long group) {
        for (long id : held) {
            if (id != -1L) {
                if (slots <= 3) {
                    add(group, held[0], slots > 1 ? held[1] : -1L, slots > 2 ? held[2] : -1L);
                } else {
                    addRow(group, held);
                }
                return;
            }
        }
    }

    long add(long group, long a, long b, long c) {
        TapPairs p = pairs;
        if (p == null) {
            p = start();
        }
        if (!p.off) {
            p.add(group, a, b, c);
        }
        return group;
    }

    /** {@link #add} of a row of more than three sources' ids ({@code row}: each source's, -1 none). */
    long addRow(long group, long[] row) {
        TapPairs p = pairs;
        if (p == null) {
            p = start();
        }
        if (!p.off) {
            p.addRow(group, row);
        }
        return group;
    }

    private synchronized TapPairs start() {
        if (pairs == null) {
            TaskContext task = TaskContext.get();
            TapPairs p = new TapPairs(slots);
            p.off = task != null && "true".equals(task.getLocalProperty(OFF));
            if (p.off) {
                p.few = null;  // nothing kept: every row goes to add, which drops it
            }
            if (task != null && !p.off) {
                Path path = new Path(dir, String.format("part-%05d.parquet", task.partitionId()));
                task.addTaskCompletionListener(ctx -> {
                    if (!ctx.isFailed() && !ctx.isInterrupted()) {
                        p.write(path);
                    }
                });
            }
            pairs = p;
        }
        return pairs;
    }
}
