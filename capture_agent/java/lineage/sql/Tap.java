package lineage.sql;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.HashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF4;

/**
 * The map side of a captured DataFrame aggregate. {@code lineage_tap_N(group, id...)} returns
 * {@code group} (a 63-bit hash of the row's group columns, which the aggregate brings out with
 * max()) and remembers, per task, which record ids of each source went into which group: a row
 * costs two appends to flat arrays (no lookup, which a task of many groups would pay in cache
 * misses), sorted by group once, at the end (a stable radix sort). When the task ends well it writes
 * them as one Parquet table, {@code <dir>/part-<partition>.parquet}: rows
 * (out_id: the group, in_ids_0, in_ids_1...: the ids of each source, sorted), sorted by group (the
 * ``frame_groups`` layout of the record engine). The aggregate itself stays Spark's own, a
 * code-generated hash aggregate; the tap's result is the only thing that refers to the hash, so it
 * runs once for every row that reaches the aggregate (filters the optimizer pushes below it
 * included, a query that does not need the hash column leaves it out).
 *
 * <p>A task that fails writes nothing; a task run again (a retry, a recomputed stage, a second
 * action over the same frame) writes its partition's table again over the first, with the same rows.
 */
public final class Tap implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final int ROW_GROUP = 1 << 22;
    /** A job with this local property "true" (a what-if replay) runs the taps without writing. */
    public static final String OFF = "lineage.taps.off";

    private final String dir;
    private final int slots;
    private transient Pairs pairs;

    public Tap(String dir, int slots) {
        this.dir = dir;
        this.slots = slots;
    }

    /** The SQL function of a tap over {@code slots} sources (1 to 3). */
    public Object function() {
        switch (slots) {
            case 1:
                return (UDF2<Long, Long, Long>) (group, a) -> add(group, a, null, null);
            case 2:
                return (UDF3<Long, Long, Long, Long>) (group, a, b) -> add(group, a, b, null);
            case 3:
                return (UDF4<Long, Long, Long, Long, Long>) (group, a, b, c) -> add(group, a, b, c);
            default:
                throw new IllegalArgumentException("a tap reads 1 to 3 sources, not " + slots);
        }
    }

    Long add(Long group, Long a, Long b, Long c) {
        Pairs p = pairs;
        if (p == null) {
            p = start();
        }
        if (!p.off) {
            p.add(group == null ? 0L : group, a, b, c);
        }
        return group;
    }

    private synchronized Pairs start() {
        if (pairs == null) {
            TaskContext task = TaskContext.get();
            Pairs p = new Pairs(slots);
            p.off = task != null && "true".equals(task.getLocalProperty(OFF));
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

    /** A task's rows: the group and each source's id (-1: none), appended in the order they came. */
    static final class Pairs {
        private final int sources;
        boolean off;
        private int size;
        private long[] groups = new long[1024];
        private final long[][] ids;

        Pairs(int sources) {
            this.sources = sources;
            ids = new long[sources][1024];
        }

        void add(long group, Long a, Long b, Long c) {
            if (size == groups.length) {
                int grown = size + (size >> 1);
                groups = Arrays.copyOf(groups, grown);
                for (int s = 0; s < sources; s++) {
                    ids[s] = Arrays.copyOf(ids[s], grown);
                }
            }
            groups[size] = group;
            ids[0][size] = a == null ? -1L : a;
            if (sources > 1) {
                ids[1][size] = b == null ? -1L : b;
            }
            if (sources > 2) {
                ids[2][size] = c == null ? -1L : c;
            }
            size++;
        }

        /** Sorts the rows by group, stably (least significant 16 bits first, a pass skipped where
         * every group has the same digit). */
        void sort() {
            long[] keys = groups;
            long[] keysTo = new long[size];
            long[][] from = ids;
            long[][] to = new long[sources][size];
            int[] counts = new int[1 << 16];
            for (int shift = 0; shift < 64; shift += 16) {
                Arrays.fill(counts, 0);
                for (int i = 0; i < size; i++) {
                    counts[(int) ((keys[i] >>> shift) & 0xffff)]++;
                }
                if (size == 0 || counts[(int) ((keys[0] >>> shift) & 0xffff)] == size) {
                    continue;
                }
                int at = 0;
                for (int d = 0; d < counts.length; d++) {
                    int n = counts[d];
                    counts[d] = at;
                    at += n;
                }
                for (int i = 0; i < size; i++) {
                    int dest = counts[(int) ((keys[i] >>> shift) & 0xffff)]++;
                    keysTo[dest] = keys[i];
                    for (int s = 0; s < sources; s++) {
                        to[s][dest] = from[s][i];
                    }
                }
                long[] k = keys;
                keys = keysTo;
                keysTo = k;
                long[][] f = from;
                from = to;
                to = f;
            }
            groups = keys;
            System.arraycopy(from, 0, ids, 0, sources);
        }

        void write(Path path) {
            sort();
            StringBuilder schema = new StringBuilder("message groups { required int64 out_id;");
            for (int s = 0; s < sources; s++) {
                schema.append(" repeated int64 in_ids_").append(s).append(';');
            }
            MessageType type = MessageTypeParser.parseMessageType(schema.append(" }").toString());
            try (ParquetWriter<int[]> writer = new Builder(path, type, this)
                    .withConf(new Configuration()).withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
                    .withCompressionCodec(CompressionCodecName.ZSTD)
                    .withWriterVersion(ParquetProperties.WriterVersion.PARQUET_2_0).withDictionaryEncoding(false)
                    .withRowGroupSize(ROW_GROUP).build()) {
                int[] run = new int[2];
                int start = 0;
                while (start < size) {
                    int end = start + 1;
                    while (end < size && groups[end] == groups[start]) {
                        end++;
                    }
                    for (int s = 0; s < sources; s++) {
                        Arrays.sort(ids[s], start, end);  // -1 (none) first
                    }
                    run[0] = start;
                    run[1] = end;
                    writer.write(run);
                    start = end;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** One group's row: rows [run[0], run[1]) of the sorted arrays. */
        void writeRow(RecordConsumer out, int[] run) {
            out.startMessage();
            out.startField("out_id", 0);
            out.addLong(groups[run[0]]);
            out.endField("out_id", 0);
            for (int s = 0; s < sources; s++) {
                long[] list = ids[s];
                int k = run[0];
                while (k < run[1] && list[k] < 0) {
                    k++;
                }
                if (k < run[1]) {
                    String name = "in_ids_" + s;
                    out.startField(name, s + 1);
                    long last = -1;
                    for (; k < run[1]; k++) {
                        if (list[k] != last) {  // an id twice in one group (a row read twice): once
                            out.addLong(list[k]);
                            last = list[k];
                        }
                    }
                    out.endField(name, s + 1);
                }
            }
            out.endMessage();
        }
    }

    private static final class Builder extends ParquetWriter.Builder<int[], Builder> {
        private final MessageType type;
        private final Pairs pairs;

        Builder(Path path, MessageType type, Pairs pairs) {
            super(path);
            this.type = type;
            this.pairs = pairs;
        }

        @Override
        protected Builder self() {
            return this;
        }

        @Override
        protected WriteSupport<int[]> getWriteSupport(Configuration conf) {
            return new WriteSupport<int[]>() {
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
                public void write(int[] run) {
                    pairs.writeRow(out, run);
                }
            };
        }
    }
}
