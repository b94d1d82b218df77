package lineage.sql;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.filter2.compat.FilterCompat;
import org.apache.parquet.filter2.compat.RowGroupFilter;
import org.apache.parquet.filter2.predicate.FilterApi;
import org.apache.parquet.filter2.predicate.FilterPredicate;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.MessageType;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.DataSourceUtils;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFilters;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFooterReader;
import org.apache.spark.sql.execution.datasources.parquet.ParquetOptions;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;

import scala.Function1;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Parquet files as a DataFrame of their rows and, last, each row's id: (index of its file &lt;&lt;
 * 32) | its row index in the file, the index Spark's {@code _metadata.row_index} gives, without
 * its cost: Spark 4's Parquet reader fills that column one boxed Long at a time through a Scala
 * range's iterator, a tenth of a TPC-H Q1's time here, where this reader writes a batch's ids in
 * one loop. Its tasks are those of Spark's own read of the files ({@link FileTasks}), and each
 * task's pieces of files are read by Spark's own vectorized Parquet reader (Parquet's file
 * format's, handed Spark's own pieces): the row groups whose middle is in the piece, in order,
 * the same rows in the same tasks as Spark's read. A piece's first row index is its first row
 * group's, from the footer. The query's filters skip row groups by their statistics as Spark's
 * scan skips them ({@link FileRowsTable} is given them): the piece is then read as a range of
 * bytes for each run of the row groups left, each range's first row index its first group's.
 * Every row of a row group read is read (the reader is given no filter: Parquet's dictionaries,
 * bloom filters and page indexes would skip row groups or rows this reader would not know of),
 * and Spark applies the filters to the rows; a range whose rows do not add up to its row groups'
 * fails the task rather than give wrong ids. The read is a table of Spark's data source API
 * ({@link FileRowsTable}). Files in partition directories, and columns Spark's reader does not
 * read as column batches, are read with {@code _metadata.row_index} instead ({@link #unread},
 * {@code capture/frame_sources.py}).
 */
public final class Parquet {
    private static final int SHIFT = 32;

    /** Made through reflection: the class lives in the agent's own class loader. */
    public Parquet() {
    }

    /** One task's reads: Spark's own pieces of files, and each one's file index. Equal to another
     * of the same pieces and indexes ({@link FileRowsTable#equals}). */
    record Split(PartitionedFile[] pieces, int[] files) implements InputPartition {
        @Override
        public boolean equals(Object other) {
            return other instanceof Split that && Arrays.equals(pieces, that.pieces) && Arrays.equals(files, that.files);
        }

        @Override
        public int hashCode() {
            return 31 * Arrays.hashCode(pieces) + Arrays.hashCode(files);
        }
    }

    /**
     * Why this reader cannot read the rows {@code plain} (Spark's read of Parquet files) reads, or
     * null when it can: it reads no partition directory's columns, and only columns Spark's reader
     * hands as column batches.
     */
    public String unread(SparkSession spark, Dataset<Row> plain) {
        HadoopFsRelation relation;
        try {
            relation = FileTasks.scan(plain).relation();
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
        if (!relation.partitionSchema().isEmpty()) {
            return "the files are in partition directories (" + relation.partitionSchema().simpleString() + ")";
        }
        if (!new ParquetFileFormat().supportBatch(spark, relation.dataSchema())) {
            return "Spark's Parquet reader reads " + relation.dataSchema().simpleString() + " as rows";
        }
        return null;
    }

    /**
     * The rows of {@code paths} (the files of {@code plain}, Spark's own read of them, in file-index
     * order) with {@code schema}'s fields (Spark's schema of the read) and their ids in column {@code
     * idName}, last ({@link FileRowsTable#frame}), read with the read's options in the tasks of
     * {@code plain}'s scan ({@link #unread} tells which reads it can read). {@code name}: the catalog table's, or the folders';
     * {@code location}: the folders read (null for a catalog table).
     */
    public Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, String[] paths, StructType schema, String idName,
                              String name, String location) {
        return frame(spark, plain, paths, schema, idName, name, location, 0);
    }

    /** {@link #frame} of files a write of {@code slices} partitions wrote, read in the partitions
     * and order written ({@link FileTasks#ofSlices}); in {@code plain}'s tasks when {@code slices}
     * is 0. */
    public Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, String[] paths, StructType schema, String idName,
                              String name, String location, int slices) {
        FileTasks tasks = slices > 0 ? FileTasks.ofSlices(plain, slices) : FileTasks.of(plain);
        HadoopFsRelation relation = FileTasks.scan(plain).relation();
        int[] index = tasks.indexesIn(paths, "Parquet");
        List<Split> splits = new ArrayList<>();
        for (int t = 0; t < tasks.tasks.size(); t++) {
            FileTasks.Piece[] pieces = tasks.tasks.get(t);
            int[] files = new int[pieces.length];
            for (int i = 0; i < pieces.length; i++) {
                files[i] = index[pieces[i].file()];
            }
            splits.add(new Split(tasks.partitioned.get(t), files));
        }
        FileRowsTable table = new FileRowsTable("parquet", paths.length, tasks.bytes(), splits,
            schema.add(idName + "_row", DataTypes.LongType, false), new Makes(relation.dataSchema(),
            scalaMap(CollectionConverters.asJava(relation.options())), idName + "_row"), name, location);
        return table.frame(spark, idName);
    }

    /** A Scala immutable map of {@code map}'s entries (one a kept plan leaves secrets out of, {@link KeptPlan}). */
    private static scala.collection.immutable.Map<String, String> scalaMap(Map<String, String> map) {
        return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(new HashMap<>(map)));
    }

    /** Makes, in the session planning the query, Spark's Parquet reader of the columns it reads,
     * as Spark's scan of the files makes it: with the read's options ({@code given}). */
    private record Makes(StructType data, scala.collection.immutable.Map<String, String> given, String idName)
            implements FileRowsTable.Readers {
        @Override
        public boolean skips() {
            return true;
        }

        @Override
        public PartitionReaderFactory of(StructType read, Filter[] filters) {
            SparkSession spark = SparkSession.active();
            List<StructField> columns = new ArrayList<>();
            int[] at = new int[read.fields().length];
            int next = 0;
            for (int i = 0; i < at.length; i++) {
                StructField field = read.fields()[i];
                at[i] = field.name().equals(idName) ? -1 : next++;
                if (at[i] >= 0) {
                    columns.add(field);
                }
            }
            StructType required = new StructType(columns.toArray(new StructField[0]));
            ParquetFileFormat format = new ParquetFileFormat();
            if (!format.supportBatch(spark, required)) {
                throw new IllegalStateException("Spark's Parquet reader reads " + required.simpleString()
                    + " as rows, not column batches");
            }
            Map<String, String> all = new HashMap<>(CollectionConverters.asJava(given));
            all.put(FileFormat.OPTION_RETURNING_BATCH(), "true");
            Configuration conf = spark.sessionState().newHadoopConfWithOptions(given);
            SQLConf sql = spark.sessionState().conf();
            Built built = BUILT.get(new Build(Reused.application(spark.sparkContext()), data, required, all,
                    Reused.settings(conf), CollectionConverters.asJava(sql.getAllConfs())), () -> new Built(
                format.buildReaderWithPartitionValues(spark, data, new StructType(), required,
                    CollectionConverters.asScala(List.<Filter>of()).toList(), scalaMap(all), conf),
                FileRowsTable.Readers.shipped(conf)));
            Skip skip = filters.length == 0 || !sql.parquetFilterPushDown() ? null : new Skip(filters,
                sql.parquetFilterPushDownDate(), sql.parquetFilterPushDownTimestamp(), sql.parquetFilterPushDownDecimal(),
                sql.parquetFilterPushDownStringPredicate(), sql.parquetFilterPushDownInFilterThreshold(),
                sql.caseSensitiveAnalysis(), new ParquetOptions(given, sql).datetimeRebaseModeInRead());
            return new Readers(built.reader(), built.conf(), at, skip);
        }
    }

    /** What Spark's Parquet reader of a read is made of: the application, the files' columns, those
     * read, the read's options, the Hadoop configuration's settings and the session's SQL settings
     * (the reader takes its own from them when it is made). */
    private record Build(String application, StructType data, StructType required, Map<String, String> options,
                         Map<String, String> settings, Map<String, String> sql) {
    }

    /** Spark's reader of a read's files (which holds the configuration it broadcast), and the
     * configuration broadcast for this reader's own reads of footers. */
    private record Built(Function1<PartitionedFile, scala.collection.Iterator<InternalRow>> reader,
                         Broadcast<SerializableConfiguration> conf) {
    }

    /** Readers made for queries' reads last: a job's queries read the same columns of a table again. */
    private static final Reused<Build, Built> BUILT = new Reused<>(64);

    /** The query's filters, and the session's settings of Spark's Parquet scan that push them to
     * the files' row groups, as that scan pushes them. */
    private record Skip(Filter[] filters, boolean date, boolean timestamp, boolean decimal, boolean string,
                        int inThreshold, boolean caseSensitive, String rebaseMode) implements Serializable {
        /** Those of {@code groups} (of the file of {@code footer}) some of whose rows may pass the
         * filters, by their statistics. */
        List<BlockMetaData> kept(ParquetMetadata footer, List<BlockMetaData> groups) {
            MessageType schema = footer.getFileMetaData().getSchema();
            Map<String, String> meta = footer.getFileMetaData().getKeyValueMetaData();
            scala.Function1<String, String> lookup = meta::get;
            ParquetFilters made = new ParquetFilters(schema, date, timestamp, decimal, string, inThreshold,
                caseSensitive, DataSourceUtils.datetimeRebaseSpec(lookup, rebaseMode), Option.empty());
            FilterPredicate all = null;
            for (Filter filter : filters) {
                Option<FilterPredicate> one = made.createFilter(filter);
                if (one.isDefined()) {
                    all = all == null ? one.get() : FilterApi.and(all, one.get());
                }
            }
            return all == null ? groups : RowGroupFilter.filterRowGroups(FilterCompat.get(all), groups, schema);
        }
    }

    /** Makes a task's reader of its split: column batches ({@code skip}: the filters whose
     * statistics skip row groups, or null). */
    private record Readers(Function1<PartitionedFile, scala.collection.Iterator<InternalRow>> reader,
                           Broadcast<SerializableConfiguration> conf, int[] at, Skip skip) implements PartitionReaderFactory {
        @Override
        public boolean supportColumnarReads(InputPartition partition) {
            return true;
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            throw new UnsupportedOperationException("a Parquet read of the lineage agent gives column batches");
        }

        @Override
        public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
            return new SplitBatches(this, (Split) partition);
        }
    }

    /** A part of a file read as one: Spark's piece of it (or of its row groups some of whose rows
     * may pass the query's filters), its file index, and the row indexes of its row groups' rows. */
    private record Range(PartitionedFile piece, int file, long firstRow, long endRow) {
    }

    /** A split's rows as column batches, its pieces in turn: Spark's reader's vectors, and the ids. */
    private static final class SplitBatches implements PartitionReader<ColumnarBatch> {
        private final Readers readers;
        private final Split split;
        private int next;  // the piece to read after those read
        private final ArrayDeque<Range> ranges = new ArrayDeque<>();  // the piece's ranges still to read
        private Range range;  // the range at hand, or null
        private scala.collection.Iterator<InternalRow> rows;  // the range at hand's batches, or null
        private ColumnarBatch batch;  // the reader's batch the one handed on wraps
        private ColumnarBatch out;
        private OnHeapColumnVector ids;
        private int room;  // the ids' capacity
        private long high;
        private long nextRow;

        SplitBatches(Readers readers, Split split) {
            this.readers = readers;
            this.split = split;
        }

        /** The ranges of the piece {@code i}: the row groups whose middle is in it (as the reader
         * reads them), all in one, or, when the query's filters skip some by their statistics, one
         * for each run of the others; none when they skip all. */
        private void rangesOf(int i) throws IOException {
            PartitionedFile piece = split.pieces()[i];
            ParquetMetadata footer = footer(piece, piece.start(), piece.start() + piece.length());
            List<BlockMetaData> groups = footer.getBlocks();
            long first = groups.isEmpty() ? 0 : groups.get(0).getRowIndexOffset();
            long end = first;
            for (BlockMetaData group : groups) {
                if (group.getRowIndexOffset() != end) {
                    throw new IllegalStateException("the row groups of " + piece.toPath() + " in [" + piece.start()
                        + ", +" + piece.length() + ") do not follow one another: row index "
                        + group.getRowIndexOffset() + " after " + end);
                }
                end += group.getRowCount();
            }
            int file = split.files()[i];
            List<BlockMetaData> kept = readers.skip() == null || groups.isEmpty() ? groups
                : readers.skip().kept(footer, groups);
            List<Range> runs = kept.size() == groups.size() ? null : runs(piece, file, kept);
            if (runs == null) {
                ranges.add(new Range(piece, file, first, end));
            } else {
                ranges.addAll(runs);
            }
        }

        /** A range for each run of row groups of {@code kept} that follow one another: the bytes
         * from its first one's start to its last one's end; null if Spark's reader would read other
         * row groups there than the run's (those whose middle is in it). */
        private List<Range> runs(PartitionedFile piece, int file, List<BlockMetaData> kept) throws IOException {
            List<Range> out = new ArrayList<>();
            int k = 0;
            while (k < kept.size()) {
                int j = k;
                while (j + 1 < kept.size() && kept.get(j + 1).getRowIndexOffset()
                        == kept.get(j).getRowIndexOffset() + kept.get(j).getRowCount()) {
                    j++;
                }
                long from = kept.get(k).getStartingPos();
                long to = kept.get(j).getStartingPos() + kept.get(j).getCompressedSize();
                long firstRow = kept.get(k).getRowIndexOffset();
                long endRow = kept.get(j).getRowIndexOffset() + kept.get(j).getRowCount();
                List<BlockMetaData> read = footer(piece, from, to).getBlocks();
                if (read.size() != j - k + 1 || read.get(0).getRowIndexOffset() != firstRow) {
                    return null;
                }
                out.add(new Range(new PartitionedFile(piece.partitionValues(), piece.filePath(), from, to - from,
                    piece.locations(), piece.modificationTime(), piece.fileSize(),
                    piece.otherConstantMetadataColumnValues()), file, firstRow, endRow));
                k = j + 1;
            }
            return out;
        }

        /** The footer of {@code piece}'s file, with the row groups whose middle is in [from, to). */
        private ParquetMetadata footer(PartitionedFile piece, long from, long to) throws IOException {
            return ParquetFooterReader.readFooter(HadoopInputFile.fromPath(piece.toPath(), readers.conf().value().value()),
                ParquetMetadataConverter.range(from, to));
        }

        @Override
        public boolean next() throws IOException {
            while (rows == null || !rows.hasNext()) {
                if (rows != null && nextRow != range.endRow()) {
                    throw new IllegalStateException("Spark's Parquet reader gave rows up to index " + nextRow
                        + " of " + range.piece().toPath() + ", its row groups end at " + range.endRow());
                }
                while (ranges.isEmpty()) {
                    if (next == split.pieces().length) {
                        return false;
                    }
                    rangesOf(next++);
                }
                range = ranges.poll();
                high = (long) range.file() << SHIFT;
                nextRow = range.firstRow();
                rows = readers.reader().apply(range.piece());
            }
            ColumnarBatch given = (ColumnarBatch) (Object) rows.next();
            int n = given.numRows();
            if (nextRow + n > range.endRow()) {
                throw new IllegalStateException("Spark's Parquet reader gave more rows of " + range.piece().toPath()
                    + " than its row groups hold (" + range.endRow() + ")");
            }
            if (given != batch || room < n) {
                wrap(given, n);
            }
            for (int r = 0; r < n; r++) {
                ids.putLong(r, high | (nextRow + r));
            }
            nextRow += n;
            out.setNumRows(n);
            return true;
        }

        /** The batch handed on: {@code given}'s vectors where the read's columns are, the ids' where theirs is. */
        private void wrap(ColumnarBatch given, int n) {
            if (room < n) {
                room = Math.max(n, 4096);
                ids = new OnHeapColumnVector(room, DataTypes.LongType);
            }
            int[] at = readers.at();
            ColumnVector[] vectors = new ColumnVector[at.length];
            for (int i = 0; i < at.length; i++) {
                vectors[i] = at[i] < 0 ? ids : given.column(at[i]);
            }
            batch = given;
            out = new ColumnarBatch(vectors);
        }

        @Override
        public ColumnarBatch get() {
            return out;
        }

        @Override
        public void close() {
            // Spark's reader closes itself at its last batch, or when the task ends
        }
    }
}
