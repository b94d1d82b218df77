package lineage.sql;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.orc.OrcFile;
import org.apache.orc.Reader;
import org.apache.orc.RecordReader;
import org.apache.orc.StripeInformation;
import org.apache.orc.TypeDescription;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.orc.OrcColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.util.SerializableConfiguration;


/**
 * ORC files as a DataFrame of their rows and, last, each row's id: (index of its file &lt;&lt; 32) |
 * its row number in the file, so ids do not depend on how the files are split (Spark's ORC
 * reader gives no {@code _metadata.row_index}). Its tasks are those of Spark's own read of the
 * files ({@link FileTasks}: byte ranges of files, packed as Spark packs them), each range read
 * as the stripes that start in it, as Spark's ORC reader reads it: the same rows in the same
 * tasks in the same order, so that an aggregate of floating-point values sums them in Spark's
 * order and gives Spark's result to the last bit. A range's first row number is the rows of
 * the stripes before it. The read is a table of Spark's data source API ({@link
 * FileRowsTable}): Spark asks it for the columns a query reads only, and a task reads its split
 * with ORC's own reader, every row (no predicate pushdown: a row number counts every row),
 * handing Spark column batches: ORC's vectors seen through Spark's own ORC column vectors, as
 * Spark's vectorized ORC reader does, and the ids. The record engine's {@code file_rows} layout
 * (format orc) reads the rows back from these ids.
 */
public final class Orc {
    private static final int SHIFT = 32;
    private static final String VECTORS = "org.apache.spark.sql.execution.datasources.orc.OrcColumnVectorUtils";

    /** Made through reflection: the class lives in the agent's own class loader. */
    public Orc() {
    }

    /** One task's reads: the pieces of files of one of Spark's file partitions, in its order. */
    record Split(Piece[] pieces) implements InputPartition {
    }

    /** A byte range of a file (its index): the stripes that start in it, the first one's first row
     * number in the file {@code firstRow}. */
    record Piece(int file, long offset, long length, long firstRow) implements Serializable {
    }

    /**
     * The rows of {@code paths} (the files of {@code plain}, Spark's own read of them, in file-index
     * order) with {@code schema}'s fields (Spark's schema of the read; each a top-level column of
     * every file, by name) and their ids in column {@code idName}, last ({@link FileRowsTable#frame}):
     * a relation of Spark's data source API, which reads only the columns a query needs and hands Spark column batches ({@link
     * FileRowsTable}), in the tasks of {@code plain}'s scan.
     */
    public Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, String[] paths, StructType schema, String idName,
                              String name, String location) {
        Configuration conf = spark.sparkContext().hadoopConfiguration();
        FileTasks tasks = FileTasks.of(plain);
        FileRowsTable table = new FileRowsTable("orc", paths.length, tasks.bytes(), splits(conf, tasks, paths),
            schema.add(idName + "_row", DataTypes.LongType, false),
            new Makes(new SerializableConfiguration(conf), paths, idName + "_row"), name, location);
        return table.frame(spark, idName);
    }

    /** The tasks of Spark's own read ({@code tasks}), each file's range with the
     * row number of the first stripe that starts in it. */
    static List<Split> splits(Configuration conf, FileTasks tasks, String[] paths) {
        int[] index = tasks.indexesIn(paths, "ORC");
        Map<Integer, List<StripeInformation>> stripes = new HashMap<>();
        List<Split> out = new ArrayList<>();
        for (FileTasks.Piece[] task : tasks.tasks) {
            Piece[] pieces = new Piece[task.length];
            for (int i = 0; i < task.length; i++) {
                FileTasks.Piece piece = task[i];
                int f = index[piece.file()];
                long before = 0;
                for (StripeInformation stripe : stripes.computeIfAbsent(f, k -> stripesOf(conf, paths[k]))) {
                    if (stripe.getOffset() < piece.start()) {
                        before += stripe.getNumberOfRows();
                    }
                }
                pieces[i] = new Piece(f, piece.start(), piece.length(), before);
            }
            out.add(new Split(pieces));
        }
        return out;
    }

    private static List<StripeInformation> stripesOf(Configuration conf, String path) {
        try (Reader reader = OrcFile.createReader(new Path(path), OrcFile.readerOptions(conf))) {
            return reader.getStripes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Makes the readers of the columns a query reads, for {@link FileRowsTable}. */
    private record Makes(SerializableConfiguration conf, String[] paths, String idName) implements FileRowsTable.Readers {
        @Override
        public PartitionReaderFactory of(StructType read, Filter[] filters) {
            return new Readers(conf, paths, read, idName);
        }
    }

    /** Makes a task's reader of its split: column batches. */
    static final class Readers implements PartitionReaderFactory {
        private static final long serialVersionUID = 1L;
        private final SerializableConfiguration conf;
        private final String[] paths;
        private final StructType read;
        private final String idName;

        Readers(SerializableConfiguration conf, String[] paths, StructType read, String idName) {
            this.conf = conf;
            this.paths = paths;
            this.read = read;
            this.idName = idName;
        }

        @Override
        public boolean supportColumnarReads(InputPartition partition) {
            return true;
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            throw new UnsupportedOperationException("an ORC read of the lineage agent gives column batches");
        }

        @Override
        public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
            return new SplitBatches(conf.value(), paths, (Split) partition, read, idName);
        }
    }

    /** A split's rows as column batches, its pieces in turn: the ORC reader's vectors seen as Spark's, and the ids. */
    private static final class SplitBatches implements PartitionReader<ColumnarBatch> {
        private final Configuration conf;
        private final String[] paths;
        private final Piece[] pieces;
        private final StructType read;
        private final String idName;
        private int next;  // the piece to read after the one at hand
        private RecordReader rows;  // the piece at hand's, or null
        private VectorizedRowBatch batch;
        private ColumnarBatch out;
        private OrcColumnVector[] wrapped;
        private OnHeapColumnVector ids;
        private long high;
        private long nextRow;

        SplitBatches(Configuration conf, String[] paths, Split split, StructType read, String idName) {
            this.conf = conf;
            this.paths = paths;
            this.pieces = split.pieces();
            this.read = read;
            this.idName = idName;
        }

        private void open(Piece piece) throws IOException {
            String path = paths[piece.file()];
            Reader reader = OrcFile.createReader(new Path(path), OrcFile.readerOptions(conf));
            TypeDescription fileSchema = reader.getSchema();
            boolean[] include = new boolean[fileSchema.getMaximumId() + 1];
            include[0] = true;
            StructField[] fields = read.fields();
            int[] columns = new int[fields.length];
            for (int i = 0; i < fields.length; i++) {
                columns[i] = fields[i].name().equals(idName) ? -1 : column(fileSchema, fields[i].name(), path);
                if (columns[i] >= 0) {
                    TypeDescription child = fileSchema.getChildren().get(columns[i]);
                    for (int id = child.getId(); id <= child.getMaximumId(); id++) {
                        include[id] = true;
                    }
                }
            }
            rows = reader.rows(reader.options().range(piece.offset(), piece.length()).include(include));
            batch = fileSchema.createRowBatch();
            if (ids == null) {
                ids = new OnHeapColumnVector(batch.getMaxSize(), DataTypes.LongType);
            }
            ColumnVector[] vectors = new ColumnVector[fields.length];
            List<OrcColumnVector> orc = new ArrayList<>();
            for (int i = 0; i < fields.length; i++) {
                if (columns[i] < 0) {
                    vectors[i] = ids;
                } else {
                    OrcColumnVector vector = sparkVector(fields[i].dataType(), batch.cols[columns[i]]);
                    orc.add(vector);
                    vectors[i] = vector;
                }
            }
            wrapped = orc.toArray(new OrcColumnVector[0]);
            out = new ColumnarBatch(vectors);
            high = (long) piece.file() << SHIFT;
            nextRow = piece.firstRow();
        }

        private static int column(TypeDescription fileSchema, String name, String path) {
            List<String> names = fileSchema.getFieldNames();
            int exact = names.indexOf(name);
            if (exact >= 0) {
                return exact;
            }
            for (int i = 0; i < names.size(); i++) {
                if (names.get(i).toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT))) {
                    return i;
                }
            }
            throw new IllegalArgumentException("ORC file " + path + " has no column " + name);
        }

        private static OrcColumnVector sparkVector(DataType type, org.apache.hadoop.hive.ql.exec.vector.ColumnVector orc) {
            try {
                Method wrap = Class.forName(VECTORS).getDeclaredMethod("toOrcColumnVector", DataType.class,
                    org.apache.hadoop.hive.ql.exec.vector.ColumnVector.class);
                wrap.setAccessible(true);
                return (OrcColumnVector) wrap.invoke(null, type, orc);
            } catch (ClassNotFoundException | NoSuchMethodException | IllegalAccessException e) {
                throw new IllegalStateException("Spark's ORC column vectors are not there: " + e, e);
            } catch (InvocationTargetException e) {
                throw new IllegalStateException("Spark's ORC column vectors refused " + type + ": " + e.getCause(),
                    e.getCause());
            }
        }

        @Override
        public boolean next() throws IOException {
            while (rows == null || !rows.nextBatch(batch)) {
                close();
                if (next == pieces.length) {
                    return false;
                }
                open(pieces[next++]);
            }
            for (OrcColumnVector column : wrapped) {
                column.setBatchSize(batch.size);
            }
            for (int r = 0; r < batch.size; r++) {
                ids.putLong(r, high | (nextRow + r));
            }
            nextRow += batch.size;
            out.setNumRows(batch.size);
            return true;
        }

        @Override
        public ColumnarBatch get() {
            return out;
        }

        @Override
        public void close() throws IOException {
            if (rows != null) {
                rows.close();
                rows = null;
            }
        }
    }
}
