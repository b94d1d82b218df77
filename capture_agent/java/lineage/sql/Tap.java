package lineage.sql;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongBinaryOperator;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.deploy.SparkHadoopUtil;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.objects.Invoke;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.ObjectType;
import org.roaringbitmap.BitmapContainer;
import org.roaringbitmap.PeekableIntIterator;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.RoaringBitmapWriter;

import scala.jdk.javaapi.CollectionConverters;

/**
 * The map side of a captured DataFrame aggregate. The aggregate function {@code lineage_tap(hash,
 * ids...)} ({@link #grouped}, {@link TapGroup}) is the row's group, a 63-bit hash of its group
 * columns kept in the aggregation buffer, and calls the tap with it and the row's ids ({@link
 * #call}); the tap remembers, per task, which record ids of each source went into which group:
 * while the task has seen at most {@link #FEW} groups, a byte at the id's place in a window of its
 * file's ids while they come dense, as a scan gives them ({@link Window}: the groups' bitmaps are
 * built from the bytes at the end), else an append to the group's own list, folded into its
 * bitmaps {@link #FOLD} ids at a time ({@link Few}, {@link GroupIds}); past that, a row
 * costs two appends to flat arrays (no lookup, which a task of many groups would pay in cache
 * misses), sorted by group once, at the end, in buckets of the group's top bits ({@link Pairs}).
 * When the task ends well it writes them as one Parquet table, {@code
 * <dir>/part-<partition>.parquet}: rows (out_id: the group, in_ids_0, in_ids_1...: the ids of each
 * source), sorted by group (the ``frame_groups`` layout of the record engine). A source's ids are a
 * list (sorted) when the task's groups hold fewer than {@link #SET_IDS} rows each on average, else
 * a Roaring bitmap (portable 64-bit format, {@link IdSets#sorted}): a few large groups, as in a
 * report by flag or by month, build a bitmap for a few nanoseconds an id where Parquet's list
 * writer costs ten times that. Lists are compressed with ZSTD; bitmaps are not (ZSTD took a fifth
 * off their size for half the write's time). The aggregate itself stays Spark's own, a
 * code-generated hash aggregate, which calls the tap once for every row it aggregates (filters the
 * optimizer pushes below it included).
 *
 * <p>A task that fails writes nothing; a task run again (a retry, a recomputed stage, a second
 * action over the same frame) writes its partition's table again over the first, with the same rows.
 */
public final class Tap implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final int ROW_GROUP = 1 << 22;
    /** Rows per group (the task's average) from which a group's ids are written as bitmaps. */
    static final int SET_IDS = 1024;
    /** Rows of a bucket of {@link Pairs#sort} (on average). */
    static final int BUCKET = 512;
    /** Groups a task keeps apart as rows come (see {@link Pairs}). */
    static final int FEW = 256;
    /** Ids of a group of a {@link Few} (of one source) that go into its bitmaps together. */
    static final int FOLD = 1024;
    /** Sources whose ids one tap takes at most. */
    public static final int MAX_SOURCES = 3;
    /** A job with this local property "true" (a what-if replay) runs the taps without writing. */
    public static final String OFF = "lineage.taps.off";

    private final String dir;
    private final int slots;
    private transient Pairs pairs;
    /** The ids of the row the tap is at, of the sources before the last. */
    private final long[] held = new long[MAX_SOURCES];

    /** The Hadoop settings of the tables' writes, made once a JVM ({@link #hadoop}). */
    private static volatile Configuration hadoop;

    /**
     * Spark's Hadoop settings (its {@code spark.hadoop.*} settings applied, as Spark's own writes
     * see them: a store on a remote file system), made once a JVM: making them loads Hadoop's
     * default files, which took a tenth of a task's table write. Writes only read them.
     */
    static Configuration hadoop() {
        Configuration conf = hadoop;
        if (conf == null) {
            SparkEnv env = SparkEnv.get();
            conf = env != null ? SparkHadoopUtil.get().newConfiguration(env.conf()) : new Configuration();
            hadoop = conf;
        }
        return conf;
    }

    public Tap(String dir, int slots) {
        this.dir = dir;
        this.slots = slots;
    }

    /** The aggregate function {@code lineage_tap(hash, ids...)} of this tap ({@link TapGroup}), the
     * rows of {@code frame} grouped by {@code keys} (hash: {@link TapGroup#groupHash}). */
    public Column grouped(Dataset<Row> frame, Column[] keys, Column[] ids) {
        return TapGroup.column(this, TapGroup.groupHash(frame, keys), ids);
    }

    /**
     * The expression {@code tap(group, ids...)} over {@code slots} id expressions (1 to 3): {@code
     * group}, the tap remembering the row's ids. It is Spark's own {@code Invoke} of {@link Link}s,
     * one per source, nested (the innermost first): generated code calls each with primitive longs,
     * nothing boxed; the calls go through {@link LongBinaryOperator} (a JDK type) because the code
     * is compiled where this jar's classes are not seen (the driver checks a stage's code). A null
     * group is 0, a null id -1 (none: an outer join's missing side).
     */
    Expression call(Expression group, Expression[] ids) {
        if (ids.length != slots) {
            throw new IllegalArgumentException("a tap of " + slots + " sources given " + ids.length + " ids");
        }
        Expression call = new Coalesce(CollectionConverters.asScala(List.of(group, lit(0L))).toSeq());
        for (int s = 0; s < slots; s++) {
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
            if (t.slots == 1) {  // one source: most rows of few groups are a byte written (Few#marked)
                Pairs p = t.pairs;
                Few few = p == null ? null : p.few;
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
                default:
                    return t.add(group, t.held[0], t.held[1], id);
            }
        }

        @Override
        public String toString() {
            return "lineage_tap(" + tap.dir + ", source " + source + ")";
        }
    }

    long add(long group, long a, long b, long c) {
        Pairs p = pairs;
        if (p == null) {
            p = start();
        }
        if (!p.off) {
            p.add(group, a, b, c);
        }
        return group;
    }

    private synchronized Pairs start() {
        if (pairs == null) {
            TaskContext task = TaskContext.get();
            Pairs p = new Pairs(slots);
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

    /**
     * A task's rows. While the task has seen at most {@link #FEW} groups, each group keeps its own
     * set of each source's ids ({@link Few}): nothing to sort by group at the end, and a group's
     * ids from a scan of files come in order, as a bitmap is best built.
     * Past that, the rows are appended as they come: the group and each source's id (-1: none),
     * sorted by group when the task ends.
     */
    static final class Pairs {
        private final int sources;
        boolean off;
        private Few few;
        private int size;
        private long[] groups = new long[1024];
        private final long[][] ids;

        Pairs(int sources) {
            this.sources = sources;
            ids = new long[sources][1024];
            few = new Few(sources);
        }

        void add(long group, long ia, long ib, long ic) {
            if (few != null) {
                if (few.add(group, ia, ib, ic)) {
                    return;
                }
                few.appendTo(this);
                few = null;
            }
            append(group, ia, ib, ic);
        }

        void append(long group, long a, long b, long c) {
            if (size == groups.length) {
                int grown = size + (size >> 1);
                groups = Arrays.copyOf(groups, grown);
                for (int s = 0; s < sources; s++) {
                    ids[s] = Arrays.copyOf(ids[s], grown);
                }
            }
            groups[size] = group;
            ids[0][size] = a;
            if (sources > 1) {
                ids[1][size] = b;
            }
            if (sources > 2) {
                ids[2][size] = c;
            }
            size++;
        }

        /**
         * Sorts the rows by group (as unsigned longs), stably: one counting pass over the groups'
         * top bits puts the rows in buckets of about {@link #BUCKET} rows, then each bucket, small
         * enough to stay in cache, is put in group order by a counting sort over its own groups
         * (found in an open-addressing table). A radix sort of 16-bit digits took four passes over
         * all the rows, each scattering them over 65,536 places.
         */
        void sort() {
            if (size < 2) {
                return;
            }
            int bits = Math.max(1, Math.min(16, 64 - Long.numberOfLeadingZeros(size / BUCKET)));
            int shift = 64 - bits;
            int[] starts = new int[(1 << bits) + 1];
            for (int i = 0; i < size; i++) {
                starts[(int) (groups[i] >>> shift) + 1]++;
            }
            int largest = 0;
            for (int d = 0; d < 1 << bits; d++) {
                largest = Math.max(largest, starts[d + 1]);
                starts[d + 1] += starts[d];
            }
            long[] keys = new long[size];
            long[][] rows = new long[sources][size];
            int[] at = Arrays.copyOf(starts, 1 << bits);
            for (int i = 0; i < size; i++) {
                int dest = at[(int) (groups[i] >>> shift)]++;
                keys[dest] = groups[i];
                for (int s = 0; s < sources; s++) {
                    rows[s][dest] = ids[s][i];
                }
            }
            Buckets buckets = new Buckets(largest);
            for (int d = 0; d < 1 << bits; d++) {
                buckets.sort(keys, rows, starts[d], starts[d + 1], groups, ids);
            }
        }

        /** The table's rows, in group order: each source's ids of a group are list[from, to), sorted
         * (ids below 0, none, first; an id twice: a row read twice). */
        List<Group> rows() {
            List<Group> rows = new ArrayList<>();
            if (few != null) {
                few.settle();
                Integer[] order = new Integer[few.count];
                for (int g = 0; g < few.count; g++) {
                    order[g] = g;
                }
                Arrays.sort(order, (x, y) -> Long.compare(few.keys[x], few.keys[y]));
                for (int g : order) {
                    long[][] lists = new long[sources][];
                    int[] to = new int[sources];
                    Folded[] folded = new Folded[sources];
                    for (int s = 0; s < sources; s++) {
                        folded[s] = few.ids[g][s].bitmaps();
                        lists[s] = folded[s] == null ? few.ids[g][s].all() : new long[0];
                        to[s] = lists[s].length;
                    }
                    rows.add(new Group(few.keys[g], lists, new int[sources], to, folded));
                }
                return rows;
            }
            sort();
            int start = 0;
            while (start < size) {
                int end = start + 1;
                while (end < size && groups[end] == groups[start]) {
                    end++;
                }
                int[] from = new int[sources];
                int[] to = new int[sources];
                for (int s = 0; s < sources; s++) {
                    Arrays.sort(ids[s], start, end);
                    from[s] = start;
                    to[s] = end;
                }
                rows.add(new Group(groups[start], ids, from, to, null));
                start = end;
            }
            return rows;
        }

        void write(Path path) {
            long seen = few != null ? few.rows : size;
            List<Group> rows = rows();
            boolean sets = seen >= (long) SET_IDS * rows.size();
            StringBuilder schema = new StringBuilder("message groups { required int64 out_id;");
            for (int s = 0; s < sources; s++) {
                schema.append(sets ? " optional binary in_ids_" : " repeated int64 in_ids_").append(s).append(';');
            }
            MessageType type = MessageTypeParser.parseMessageType(schema.append(" }").toString());
            Builder builder = new Builder(path, type, sources, sets);
            for (int s = 0; s < sources; s++) {  // out_id's statistics skip row groups; the ids' are not read
                builder.withStatisticsEnabled("in_ids_" + s, false);
            }
            try (ParquetWriter<Group> writer = builder
                    .withConf(hadoop()).withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
                    .withCompressionCodec(sets ? CompressionCodecName.UNCOMPRESSED : CompressionCodecName.ZSTD)
                    .withWriterVersion(ParquetProperties.WriterVersion.PARQUET_2_0).withDictionaryEncoding(false)
                    .withSizeStatisticsEnabled(false).withPageWriteChecksumEnabled(false)
                    .withRowGroupSize(ROW_GROUP).build()) {
                for (Group row : rows) {
                    writer.write(row);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * The second step of {@link Pairs#sort}: the rows {@code [from, to)} of one bucket, copied from
     * {@code keys} and {@code rows} to {@code keysTo} and {@code rowsTo} in group order, each
     * group's rows in the order they were. A bucket's groups share their top bits (their sign too),
     * so signed order is unsigned order there.
     */
    static final class Buckets {
        private int[] groupOf;  // a row's group: its index among the bucket's groups
        private long[] table = new long[64];  // open addressing: group, or EMPTY
        private int[] index = new int[64];
        private long[] found = new long[16];  // the bucket's groups, as found
        private int[] counts = new int[16];
        private static final long EMPTY = Long.MIN_VALUE;  // no group of this bucket (its sign would differ)

        Buckets(int largest) {
            groupOf = new int[Math.max(1, largest)];
        }

        void sort(long[] keys, long[][] rows, int from, int to, long[] keysTo, long[][] rowsTo) {
            int n = to - from;
            if (n == 0) {
                return;
            }
            if (keys[from] == keys[to - 1] && allSame(keys, from, to)) {
                System.arraycopy(keys, from, keysTo, from, n);
                for (int s = 0; s < rows.length; s++) {
                    System.arraycopy(rows[s], from, rowsTo[s], from, n);
                }
                return;
            }
            int slots = Integer.highestOneBit(Math.max(16, n) * 2 - 1) * 2;
            if (table.length < slots) {
                table = new long[slots];
                index = new int[slots];
            }
            long mark = keys[from] < 0 ? 0L : EMPTY;  // a value no group of this bucket has
            Arrays.fill(table, 0, slots, mark);
            int distinct = 0;
            for (int i = from; i < to; i++) {
                long key = keys[i];
                int slot = (int) ((key ^ (key >>> 31)) * 0x9E3779B97F4A7C15L >>> 33) & (slots - 1);
                while (table[slot] != mark && table[slot] != key) {
                    slot = (slot + 1) & (slots - 1);
                }
                if (table[slot] == mark) {
                    if (distinct == found.length) {
                        found = Arrays.copyOf(found, distinct * 2);
                        counts = Arrays.copyOf(counts, distinct * 2);
                    }
                    table[slot] = key;
                    index[slot] = distinct;
                    found[distinct] = key;
                    counts[distinct++] = 0;
                }
                int g = index[slot];
                groupOf[i - from] = g;
                counts[g]++;
            }
            long[] order = Arrays.copyOf(found, distinct);
            Arrays.sort(order);
            int[] begin = new int[distinct];  // by a group's index: where its rows go
            int next = from;
            for (long key : order) {
                int slot = (int) ((key ^ (key >>> 31)) * 0x9E3779B97F4A7C15L >>> 33) & (slots - 1);
                while (table[slot] != key) {
                    slot = (slot + 1) & (slots - 1);
                }
                int g = index[slot];
                begin[g] = next;
                next += counts[g];
            }
            for (int i = from; i < to; i++) {
                int dest = begin[groupOf[i - from]]++;
                keysTo[dest] = keys[i];
                for (int s = 0; s < rows.length; s++) {
                    rowsTo[s][dest] = rows[s][i];
                }
            }
        }

        private static boolean allSame(long[] keys, int from, int to) {
            for (int i = from + 1; i < to; i++) {
                if (keys[i] != keys[from]) {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * A task's first {@link #FEW} groups, each with the ids of each source ({@link GroupIds});
     * {@link #add} says no (and changes nothing) to a new group past them. While a source's ids
     * come dense (a scan of files), a row only marks its id's group in the source's {@link Window};
     * the first id that does not fit there moves the window's ids into the groups' lists, which
     * take the source's ids from then on.
     */
    static final class Few {
        private static final int SLOTS = 2 * FEW;  // an open-addressing table of group -> index + 1
        final long[] keys = new long[FEW];
        /** Each group's ids of each source. */
        final GroupIds[][] ids = new GroupIds[FEW][];
        int count;
        long rows;
        private final int[] table = new int[SLOTS];
        /** A cache of {@link #find} for {@link #marked}: at {@code group & (SLOTS - 1)}, the group
         * found last there (-1: none; groups are at least 0), and its index + 1 as the byte of its
         * window's ids (0: none). */
        private final long[] cached = new long[SLOTS];
        private final byte[] codes = new byte[SLOTS];
        private final int sources;
        /** Each source's window (null: its ids are in the groups' lists). */
        private final Window[] windows;

        Few(int sources) {
            this.sources = sources;
            windows = new Window[sources];
            for (int s = 0; s < sources; s++) {
                windows[s] = new Window();
            }
            Arrays.fill(cached, -1L);
        }

        /**
         * The row of one source's tap, when it is only a byte to write: its group found in the
         * cache, its id in the window's bytes so far and not marked. Else false, and {@link #add}
         * takes the row: the few instructions here are what Spark's generated aggregate runs for
         * most rows of a report by a few keys.
         */
        boolean marked(long group, long id) {
            int slot = (int) group & (SLOTS - 1);
            Window window = windows[0];
            if (cached[slot] != group || window == null) {
                return false;
            }
            byte[] bytes = window.bytes;
            long at = id - window.start;
            if (at < 0 || at >= bytes.length || bytes[(int) at] != 0) {
                return false;
            }
            bytes[(int) at] = codes[slot];
            rows++;
            return true;
        }

        boolean add(long group, long a, long b, long c) {
            int g = find(group);  // a probe: cheaper than a check of the last group, which rows of
            if (g < 0) {          // groups in no order miss three times in four (a report by flag)
                return false;
            }
            if (a >= 0) {
                mark(0, g, a);
            }
            if (sources > 1 && b >= 0) {
                mark(1, g, b);
            }
            if (sources > 2 && c >= 0) {
                mark(2, g, c);
            }
            rows++;
            return true;
        }

        private void mark(int s, int g, long id) {
            Window window = windows[s];
            if (window != null) {
                byte[] bytes = window.bytes;  // the row's work when its id is in the file's window so far:
                long at = id - window.start;  // small, so that Spark's generated code inlines the tap
                if (at >= 0 && at < bytes.length && bytes[(int) at] == 0 && g < 255) {
                    bytes[(int) at] = (byte) (g + 1);
                    return;
                }
                if (window.mark(id, g)) {
                    return;
                }
                settle(s);
            }
            ids[g][s].add(id);
        }

        /** Moves source {@code s}'s window's ids into the groups' lists, which take its ids from then on. */
        private void settle(int s) {
            Window window = windows[s];
            windows[s] = null;
            window.each((id, g) -> ids[g][s].addAfter(id));
        }

        /** Every window's ids in the groups' bitmaps (before the groups are read). */
        void settle() {
            for (int s = 0; s < sources; s++) {
                if (windows[s] != null) {
                    List<TreeMap<Long, RoaringBitmap>> sets = windows[s].bitmaps(count);
                    windows[s] = null;
                    for (int g = 0; g < count; g++) {
                        ids[g][s].built(sets.get(g));
                    }
                }
            }
        }

        /** The group's index, a new one if there is room (else -1). */
        private int find(long group) {
            int slot = (int) ((group ^ (group >>> 29)) * 0x9E3779B97F4A7C15L >>> 40) & (SLOTS - 1);
            while (table[slot] != 0) {
                int g = table[slot] - 1;
                if (keys[g] == group) {
                    if (g < 255) {  // as mark's bytes
                        cached[(int) group & (SLOTS - 1)] = group;
                        codes[(int) group & (SLOTS - 1)] = (byte) (g + 1);
                    }
                    return g;
                }
                slot = (slot + 1) & (SLOTS - 1);
            }
            if (count == FEW) {
                return -1;
            }
            int g = count++;
            keys[g] = group;
            ids[g] = new GroupIds[sources];
            for (int s = 0; s < sources; s++) {
                ids[g][s] = new GroupIds();
            }
            table[slot] = g + 1;
            return g;
        }

        /** Its rows as rows of {@code pairs} (a group's ids of each source one per row). */
        void appendTo(Pairs pairs) {
            settle();
            for (int g = 0; g < count; g++) {
                boolean none = true;
                for (int s = 0; s < sources; s++) {
                    for (long id : ids[g][s].all()) {
                        pairs.append(keys[g], s == 0 ? id : -1L, s == 1 ? id : -1L, s == 2 ? id : -1L);
                        none = false;
                    }
                }
                if (none) {  // a group whose rows had no id: still a group of the table
                    pairs.append(keys[g], -1L, -1L, -1L);
                }
            }
        }
    }

    /**
     * One source's ids in a task's {@link Few} groups while they come dense, as a scan of files
     * gives them: for each file (the ids' top 32 bits), pages of a byte for each id, a page for each
     * 16-bit chunk of the file's ids (a Roaring bitmap's container), the byte its group's index + 1
     * (0: no row). A row costs a byte written in the page at hand; the groups' bitmaps are built
     * once, at the end, a container from each page ({@link #bitmaps}). A page is at most 64 KB,
     * made as ids reach it (a kilobyte, doubled as ids reach further; whole after a whole one):
     * one array of a file's ids, doubled as it grew, was copied at each doubling, and past a
     * megabyte each copy was a humongous object of the JVM's G1 collector, which starts a
     * collection and a concurrent marking of the heap (on two cores, against the tasks). An id
     * that does not fit says no ({@link #mark}), and the window's ids go to the groups' lists
     * ({@link #each}), which take the source's ids from then on: an id of a chunk below its file's
     * first, of a file seen before, twice, of group 255 or later, or whose page would make the
     * pages past their first kilobytes more than eight times the ids marked and 64 KB.
     */
    static final class Window {
        /** Ids of a page: a 16-bit chunk's. */
        static final int PAGE = 1 << 16;
        private static final int SLACK = 1 << 16;
        /** Groups up to which {@link #fill} compares eight bytes at once. */
        static final int SWAR = 16;
        private final List<Long> firsts = new ArrayList<>();  // each file's first page's first id
        private final List<byte[][]> files = new ArrayList<>();  // each file's pages (null: no id)
        /** The page at hand (empty: none yet), of ids from {@link #start}. */
        byte[] bytes = new byte[0];
        long start = -1;
        private long pages;  // bytes of the pages made
        private long marked;  // ids marked in the pages but the page at hand

        /** Marks {@code id} (at least 0) as a row of group {@code g}, if it fits (the rows whose id
         * is in the page at hand are marked by {@link Few#marked} or {@link Few#add}). */
        boolean mark(long id, int g) {
            if (g >= 255 || (id >>> 32 != start >>> 32 && !open(id))) {
                return false;
            }
            if ((id - start < 0 || id - start >= bytes.length) && !turn(id)) {
                return false;
            }
            int at = (int) (id - start);
            if (bytes[at] != 0) {
                return false;
            }
            bytes[at] = (byte) (g + 1);
            return true;
        }

        /** Starts the pages of {@code id}'s file, unless its file has been seen before. */
        private boolean open(long id) {
            for (long file : firsts) {
                if (file >>> 32 == id >>> 32) {
                    return false;
                }
            }
            firsts.add(id & ~(PAGE - 1L));
            files.add(new byte[1][]);
            return true;
        }

        /**
         * Makes the page of {@code id} (of the file at hand) the page at hand, reaching {@code id}: a
         * new page is a kilobyte, or a whole page after a whole page of the file's (a scan's ids), and
         * a page grows by doubling; it says no when the pages would pass the bound.
         */
        private boolean turn(long id) {
            long first = firsts.get(firsts.size() - 1);
            if (id < first) {
                return false;
            }
            marked += count(bytes);  // the page left: its ids counted once, while it is not at hand
            bytes = new byte[0];
            byte[][] file = files.get(files.size() - 1);
            int p = (int) ((id - first) >>> 16);
            int at = (int) (id - first) & (PAGE - 1);
            if (p >= file.length) {
                file = Arrays.copyOf(file, Math.max(p + 1, 2 * file.length));
                files.set(files.size() - 1, file);
            }
            byte[] page = file[p];
            int length = page == null ? 0 : page.length;
            if (at >= length) {
                int grown = Math.max(length == 0 ? 1024 : 2 * length, Integer.highestOneBit(at) << 1);
                if (length == 0 && p > 0 && file[p - 1] != null && file[p - 1].length == PAGE) {
                    grown = PAGE;
                }
                grown = Math.min(PAGE, grown);
                if (grown > 1024 && pages + grown - length > 8 * marked + SLACK) {
                    return false;
                }
                page = page == null ? new byte[grown] : Arrays.copyOf(page, grown);
                file[p] = page;
                pages += grown - length;
            }
            if (length > 0) {
                marked -= count(page);  // a page made just now has none
            }
            bytes = page;
            start = first + ((long) p << 16);
            return true;
        }

        private static int count(byte[] page) {
            int n = 0;
            for (byte b : page) {
                n += b == 0 ? 0 : 1;
            }
            return n;
        }

        /**
         * Each of the {@code count} groups' ids as Roaring bitmaps by their top 32 bits: for each
         * page, a bitmap container of each group's, its bits set from the bytes ({@link #fill}),
         * appended to the group's bitmap (the library's own form of a chunk; a small one becomes a
         * sorted array): a nanosecond or two an id, where adding each id to its group's bitmap cost
         * some ten.
         */
        List<TreeMap<Long, RoaringBitmap>> bitmaps(int count) {
            List<TreeMap<Long, RoaringBitmap>> out = new ArrayList<>();
            for (int g = 0; g < count; g++) {
                out.add(new TreeMap<>());
            }
            long[][] words = new long[count + 1][1024];
            boolean[] seen = new boolean[count + 1];
            for (int f = 0; f < firsts.size(); f++) {
                long first = firsts.get(f);
                RoaringBitmap[] sets = new RoaringBitmap[count];
                byte[][] file = files.get(f);
                for (int p = 0; p < file.length; p++) {
                    if (file[p] == null) {
                        continue;
                    }
                    long key = ((first & 0xFFFFFFFFL) >>> 16) + p;
                    fill(file[p], count, words, seen);
                    for (int g = 0; g < count; g++) {
                        if (seen[g + 1]) {
                            if (sets[g] == null) {
                                sets[g] = new RoaringBitmap();
                                out.get(g).put(first >>> 32, sets[g]);
                            }
                            sets[g].append((char) key, new BitmapContainer(words[g + 1], -1).repairAfterLazy());
                            words[g + 1] = new long[1024];  // the container keeps the words
                        }
                    }
                }
            }
            return out;
        }

        private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
        private static final long LOW7 = 0x7F7F7F7F7F7F7F7FL;

        /**
         * Sets, in {@code words[v]} (zeroed: 65,536 bits), bit {@code k} for each byte {@code
         * page[k] == v}, and {@code seen[v]} if any (v: 1 to {@code count}; the bits of 0 are not
         * set). Of {@link #SWAR} groups or fewer, 64 bytes at a time: for each group, eight bytes
         * compared at once in a long (the bytes equal to the group's become 0x80, gathered into 8
         * bits by one multiply), no branch on the bytes; else a byte at a time.
         */
        static void fill(byte[] page, int count, long[][] words, boolean[] seen) {
            Arrays.fill(seen, false);
            int i = 0;
            if (count <= SWAR) {
                for (; i + 64 <= page.length; i += 64) {
                    for (int v = 1; v <= count; v++) {
                        long pattern = v * 0x0101010101010101L;
                        long mask = 0;
                        for (int k = 0; k < 8; k++) {
                            long x = (long) LONGS.get(page, i + 8 * k) ^ pattern;
                            long zero = ~(((x & LOW7) + LOW7) | x | LOW7);  // 0x80 in each byte of x that is 0
                            mask |= ((zero >>> 7) * 0x0102040810204080L >>> 56) << (8 * k);
                        }
                        words[v][i >>> 6] = mask;
                        seen[v] |= mask != 0;
                    }
                }
            }
            for (; i < page.length; i++) {
                one(page[i] & 0xFF, i, words, seen);
            }
        }

        private static void one(int v, int bit, long[][] words, boolean[] seen) {
            if (v != 0) {
                words[v][bit >>> 6] |= 1L << bit;
                seen[v] = true;
            }
        }

        /** Each id marked and its group, file by file as they came, each file's in id order. */
        void each(IdGroup to) {
            for (int f = 0; f < firsts.size(); f++) {
                long first = firsts.get(f);
                byte[][] file = files.get(f);
                for (int p = 0; p < file.length; p++) {
                    byte[] page = file[p];
                    for (int i = 0; page != null && i < page.length; i++) {
                        if (page[i] != 0) {
                            to.take(first + ((long) p << 16) + i, (page[i] & 0xFF) - 1);
                        }
                    }
                }
            }
        }

        /** Takes an id of a group. */
        interface IdGroup {
            void take(long id, int group);
        }
    }

    /**
     * The ids of one source in one group of {@link Few}, appended as they come to a list of at
     * most {@link #FOLD} ids; a full list whose ids are in order (each at least the one before,
     * as a scan of files gives them) goes into the group's bitmaps ({@link Folded}) in one pass,
     * the bitmap at hand in cache, and the list starts again. Ids out of order stay in the list,
     * which then grows, and are sorted once, at the end: setting them one by one in bitmaps
     * had cost a search of the bitmaps for each (250 ns an id, where the list costs a few).
     */
    static final class GroupIds {
        private long[] list = new long[64];
        private int size;
        /** The ids folded, all at most {@link #last} (null: none). */
        private Folded folded;
        private long last = -1;
        private boolean ordered = true;

        void add(long id) {
            if (size == list.length) {
                if (!(ordered && size >= FOLD && fold())) {
                    list = Arrays.copyOf(list, size * 2);
                }
            }
            list[size++] = id;
        }

        /** Takes {@code sets} (the group's ids by their top 32 bits) as its bitmaps; it has no id yet. */
        void built(TreeMap<Long, RoaringBitmap> sets) {
            if (!sets.isEmpty()) {
                folded = new Folded(sets);
                Map.Entry<Long, RoaringBitmap> top = sets.lastEntry();
                last = top.getKey() << 32 | Integer.toUnsignedLong(top.getValue().last());
            }
        }

        /** Adds {@code id}: straight into the bitmaps when it comes in order after them and no list waits. */
        void addAfter(long id) {
            if (size == 0 && ordered && id >= last) {
                if (folded == null) {
                    folded = new Folded();
                }
                folded.add(id);
                last = id;
            } else {
                add(id);
            }
        }

        /** Folds the list into the bitmaps, if its ids are in order after those folded. */
        private boolean fold() {
            long previous = last;
            for (int i = 0; i < size; i++) {
                if (list[i] < previous) {
                    ordered = false;
                    return false;
                }
                previous = list[i];
            }
            if (folded == null) {
                folded = new Folded();
            }
            for (int i = 0; i < size; i++) {
                folded.add(list[i]);
            }
            last = previous;
            size = 0;
            return true;
        }

        /** The ids as bitmaps, when they all came in order (else null: {@link #all}). */
        Folded bitmaps() {
            if (ordered && size > 0) {
                fold();
            }
            return ordered ? folded : null;
        }

        /** Every id, sorted (an id twice: twice). */
        long[] all() {
            long[] before = folded == null ? new long[0] : folded.all();
            long[] out = Arrays.copyOf(before, before.length + size);
            System.arraycopy(list, 0, out, before.length, size);
            Arrays.sort(out);
            return out;
        }
    }

    /**
     * The ids of a group of {@link Few} (of one source) that came in order ({@link GroupIds}), kept
     * as Roaring bitmaps by their top 32 bits, each written by the library's appender ({@code
     * RoaringBitmapWriter}): an id costs a bit set in the chunk at hand. An id twice is kept once.
     */
    static final class Folded {
        private final TreeMap<Long, RoaringBitmapWriter<RoaringBitmap>> parts = new TreeMap<>();
        private final TreeMap<Long, RoaringBitmap> built;
        private long high = -1;
        private RoaringBitmapWriter<RoaringBitmap> part;

        Folded() {
            built = new TreeMap<>();
        }

        /** The ids of {@code sets} (by their top 32 bits), and those added. */
        Folded(TreeMap<Long, RoaringBitmap> sets) {
            built = sets;
        }

        /** Adds {@code id} (at least 0). */
        void add(long id) {
            long top = id >>> 32;
            if (top != high) {
                part = parts.computeIfAbsent(top, h -> RoaringBitmapWriter.writer().get());
                high = top;
            }
            part.add((int) id);
        }

        private TreeMap<Long, RoaringBitmap> bitmaps() {
            TreeMap<Long, RoaringBitmap> out = new TreeMap<>(built);
            for (Map.Entry<Long, RoaringBitmapWriter<RoaringBitmap>> entry : parts.entrySet()) {
                out.merge(entry.getKey(), entry.getValue().get(), (x, y) -> RoaringBitmap.or(x, y));
            }
            return out;
        }

        /** The set, in the portable 64-bit format. */
        byte[] bytes() {
            return IdSets.portable(bitmaps());
        }

        /** Every id, sorted, each once. */
        long[] all() {
            TreeMap<Long, RoaringBitmap> sets = bitmaps();
            long n = 0;
            for (RoaringBitmap set : sets.values()) {
                n += set.getLongCardinality();
            }
            long[] out = new long[Math.toIntExact(n)];
            int i = 0;
            for (Map.Entry<Long, RoaringBitmap> set : sets.entrySet()) {
                long high = set.getKey() << 32;
                PeekableIntIterator it = set.getValue().getIntIterator();
                while (it.hasNext()) {
                    out[i++] = high | Integer.toUnsignedLong(it.next());
                }
            }
            return out;
        }
    }

    /** A row of the table: the group, and each source's ids: {@code lists[s][from[s], to[s])}
     * (sorted), or a group of {@link Few}'s {@code folded[s]} (null: none). */
    static final class Group {
        final long group;
        final long[][] lists;
        final int[] from;
        final int[] to;
        final Folded[] folded;

        Group(long group, long[][] lists, int[] from, int[] to, Folded[] folded) {
            this.group = group;
            this.lists = lists;
            this.from = from;
            this.to = to;
            this.folded = folded;
        }

        void write(RecordConsumer out, int sources, boolean sets) {
            out.startMessage();
            out.startField("out_id", 0);
            out.addLong(group);
            out.endField("out_id", 0);
            for (int s = 0; s < sources; s++) {
                long[] list = lists[s];
                int k = from[s];
                int end = to[s];
                while (k < end && list[k] < 0) {
                    k++;
                }
                Folded f = folded == null ? null : folded[s];
                if (k < end || f != null) {
                    String name = "in_ids_" + s;
                    out.startField(name, s + 1);
                    if (sets) {
                        byte[] set = f == null ? IdSets.sorted(list, k, end) : f.bytes();
                        out.addBinary(Binary.fromConstantByteArray(set));
                    } else {
                        if (f != null) {
                            list = f.all();
                            k = 0;
                            end = list.length;
                        }
                        long last = -1;
                        for (; k < end; k++) {
                            if (list[k] != last) {  // an id twice in one group (a row read twice): once
                                out.addLong(list[k]);
                                last = list[k];
                            }
                        }
                    }
                    out.endField(name, s + 1);
                }
            }
            out.endMessage();
        }
    }

    private static final class Builder extends ParquetWriter.Builder<Group, Builder> {
        private final MessageType type;
        private final int sources;
        private final boolean sets;

        Builder(Path path, MessageType type, int sources, boolean sets) {
            super(path);
            this.type = type;
            this.sources = sources;
            this.sets = sets;
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        protected WriteSupport<Group> getWriteSupport(Configuration conf) {
            return new WriteSupport<Group>() {
                private RecordConsumer out;

                @Override
                public WriteContext init(Configuration configuration) {
                    return new WriteContext(type, new HashMap<>());
                }

                @Override
                public void prepareForWrite(RecordConsumer recordConsumer) {
                    out = recordConsumer;
                }

                @Override
                public void write(Group row) {
                    row.write(out, sources, sets);
                }
            };
        }
    }
}
