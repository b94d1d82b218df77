package lineage.sql;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.column.ParquetProperties;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.parquet.hadoop.codec.ZstandardCodec;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.io.api.RecordConsumer;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.MessageTypeParser;
import org.apache.spark.SparkEnv;
import org.apache.spark.deploy.SparkHadoopUtil;

/**
 * The Parquet table a task's {@link Tap} writes, {@code <dir>/part-<partition>.parquet}: one row
 * ({@link TapRow}) per group, in group order: out_id, the group, and in_ids_0, in_ids_1...: the ids
 * of each source, a list (sorted) when the task's groups hold fewer than {@link #SET_IDS} rows each
 * on average, else a Roaring bitmap (portable 64-bit format, {@link IdSets#sorted}). Lists are
 * compressed with ZSTD at level 1 ({@link #ZSTD_LEVEL}); bitmaps are not (ZSTD took a fifth off
 * their size for half the write's time). A write replaces the table a run of the task before wrote.
 *
 * <p>A table is written under a hidden name beside its own and renamed when whole: a task Spark no
 * longer waits for (a stage adaptive execution cancelled once the answer was known) can still be
 * writing when the action returns, and what reads the point then (its row counts) must see whole
 * tables or none. Hidden names are skipped by the store's listing and by Spark's readers.
 */
final class TapTable {
    private static final int ROW_GROUP = 1 << 22;
    /** Rows per group (the task's average) from which a group's ids are written as bitmaps. */
    static final int SET_IDS = 1024;
    /**
     * ZSTD's level for lists. Level 3, Parquet's default, took a quarter of the write of a table of
     * 2M ids in 200,000 groups and gained nothing there (ids spread over the task's rows: their
     * deltas, bit-packed, leave ZSTD nothing to find); level 1 costs a third of that, and the
     * tables of a join's groups of few ids (TPC-H Q3's, 47,000 groups, where ZSTD finds the deltas'
     * high bits alike) grow by 4% (uncompressed: 25%, Snappy: 12%).
     */
    static final int ZSTD_LEVEL = 1;

    /** The Hadoop settings of the tables' writes, made once a JVM ({@link #hadoop}). */
    private static volatile Configuration hadoop;

    private TapTable() {
    }

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
            conf.setInt(ZstandardCodec.PARQUET_COMPRESS_ZSTD_LEVEL, ZSTD_LEVEL);
            hadoop = conf;
        }
        return conf;
    }

    /** Writes {@code rows} ({@code groups} of them, in group order, of {@code sources} sources;
     * {@code seen}: the rows the task's tap took) as the table at {@code path}, over any table there. */
    static void write(Path path, int sources, long seen, int groups, Iterable<TapRow> rows) {
        boolean sets = seen >= (long) SET_IDS * groups;
        StringBuilder schema = new StringBuilder("message groups { required int64 out_id;");
        for (int s = 0; s < sources; s++) {
            schema.append(sets ? " optional binary in_ids_" : " repeated int64 in_ids_").append(s).append(';');
        }
        MessageType type = MessageTypeParser.parseMessageType(schema.append(" }").toString());
        Path writing = new Path(path.getParent(), "." + path.getName() + "." + UUID.randomUUID() + ".writing");
        Builder builder = new Builder(writing, type, sources, sets);
        for (int s = 0; s < sources; s++) {  // out_id's statistics skip row groups; the ids' are not read
            builder.withStatisticsEnabled("in_ids_" + s, false);
        }
        try (ParquetWriter<TapRow> writer = builder
                .withConf(hadoop()).withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
                .withCompressionCodec(sets ? CompressionCodecName.UNCOMPRESSED : CompressionCodecName.ZSTD)
                .withWriterVersion(ParquetProperties.WriterVersion.PARQUET_2_0).withDictionaryEncoding(false)
                .withSizeStatisticsEnabled(false).withPageWriteChecksumEnabled(false)
                .withRowGroupSize(ROW_GROUP).build()) {
            for (TapRow row : rows) {
                writer.write(row);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        publish(writing, path);
    }

    /** Renames the whole table {@code writing} to {@code path}, over a table a run before wrote (a
     * rename replaces nothing on some file systems). When another task published {@code path}
     * between the delete and the rename (the same partition of a copy of the same aggregate, which
     * shares its tap: the same rows), its table stays and this one is dropped. */
    private static void publish(Path writing, Path path) {
        try {
            FileSystem fs = path.getFileSystem(hadoop());
            fs.delete(path, false);
            if (!fs.rename(writing, path)) {
                if (fs.exists(path)) {
                    fs.delete(writing, false);
                    return;
                }
                throw new IOException("cannot rename " + writing + " to " + path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Parquet's writer of {@link TapRow}s, each written by {@link TapRow#write}. */
    private static final class Builder extends ParquetWriter.Builder<TapRow, Builder> {
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
        protected WriteSupport<TapRow> getWriteSupport(Configuration conf) {
            return new WriteSupport<TapRow>() {
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
                public void write(TapRow row) {
                    row.write(out, sources, sets);
                }
            };
        }
    }
}
