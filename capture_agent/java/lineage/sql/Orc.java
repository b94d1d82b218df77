package lineage.sql;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.exec.vector.VectorizedRowBatch;
import org.apache.orc.OrcFile;
import org.apache.orc.Reader;
import org.apache.orc.RecordReader;
import org.apache.orc.StripeInformation;
import org.apache.orc.TypeDescription;
import org.apache.orc.mapred.OrcInputFormat;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.datasources.orc.OrcColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
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
 * reader gives no {@code _metadata.row_index}). A split is a run of whole stripes, at most {@code
 * splitBytes} long (one stripe at least); its first row's number is the rows of the stripes before
 * it. Rows are read with ORC's own reader, every row of the split (no predicate pushdown: a row
 * number counts every row), and made Spark values by Spark's ORC column vectors, as Spark's
 * vectorized ORC reader makes them. The record engine's {@code file_rows} layout (format orc)
 * reads the rows back from these ids.
 */
public final class Orc {
    private static final int SHIFT = 32;
    private static final String VECTORS = "org.apache.spark.sql.execution.datasources.orc.OrcColumnVectorUtils";

    /** Made through reflection: the class lives in the agent's own class loader. */
    public Orc() {
    }

    /** One task's stripes: file index, byte range, the number of its first row. */
    record Split(int file, long offset, long length, long firstRow) implements java.io.Serializable {
    }

    /**
     * The rows of {@code paths} (the files of the read, in file-index order) with {@code schema}'s
     * fields (Spark's schema of the read; each a top-level column of every file, by name) and an id
     * column named {@code idName}, last.
     */
    public Dataset<Row> frame(SparkSession spark, String[] paths, StructType schema, String idName, long splitBytes) {
        Configuration conf = spark.sparkContext().hadoopConfiguration();
        List<Split> splits = new ArrayList<>();
        for (int f = 0; f < paths.length; f++) {
            splits.addAll(splits(conf, f, paths[f], splitBytes));
        }
        SerializableConfiguration shipped = new SerializableConfiguration(conf);
        List<Integer> indexes = new ArrayList<>();
        for (int i = 0; i < splits.size(); i++) {
            indexes.add(i);
        }
        JavaRDD<InternalRow> rows = JavaSparkContext.fromSparkContext(spark.sparkContext())
            .parallelize(indexes, Math.max(1, splits.size()))
            .mapPartitions(part -> {
                List<InternalRow> none = List.of();
                return part.hasNext() ? new SplitRows(shipped.value(), paths, splits.get(part.next()), schema)
                    : none.iterator();
            }, false);
        return spark.internalCreateDataFrame(rows.rdd(), schema.add(idName, DataTypes.LongType, false), false);
    }

    static List<Split> splits(Configuration conf, int file, String path, long splitBytes) {
        List<Split> out = new ArrayList<>();
        try (Reader reader = OrcFile.createReader(new Path(path), OrcFile.readerOptions(conf))) {
            long row = 0;
            long start = -1;
            long end = -1;
            long first = 0;
            for (StripeInformation stripe : reader.getStripes()) {
                if (start >= 0 && stripe.getOffset() + stripe.getLength() - start > splitBytes) {
                    out.add(new Split(file, start, end - start, first));
                    start = -1;
                }
                if (start < 0) {
                    start = stripe.getOffset();
                    first = row;
                }
                end = stripe.getOffset() + stripe.getLength();
                row += stripe.getNumberOfRows();
            }
            if (start >= 0) {
                out.add(new Split(file, start, end - start, first));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out;
    }

    /** A split's rows, each copied (the batch is reused), with its id last. */
    private static final class SplitRows implements Iterator<InternalRow> {
        private final RecordReader rows;
        private final VectorizedRowBatch batch;
        private final ColumnVector[] columns;
        private final OrcColumnVector[] wrapped;
        private final OnHeapColumnVector ids;
        private final long high;
        private long nextRow;
        private ColumnarBatch current;
        private int at;

        SplitRows(Configuration conf, String[] paths, Split split, StructType schema) throws IOException {
            Reader reader = OrcFile.createReader(new Path(paths[split.file()]), OrcFile.readerOptions(conf));
            TypeDescription fileSchema = reader.getSchema();
            rows = reader.rows(OrcInputFormat.buildOptions(conf, reader, split.offset(), split.length()));
            batch = fileSchema.createRowBatch();
            ids = new OnHeapColumnVector(batch.getMaxSize(), DataTypes.LongType);
            StructField[] fields = schema.fields();
            columns = new ColumnVector[fields.length + 1];
            wrapped = new OrcColumnVector[fields.length];
            for (int i = 0; i < fields.length; i++) {
                int column = column(fileSchema, fields[i].name(), paths[split.file()]);
                wrapped[i] = sparkVector(fields[i].dataType(), batch.cols[column]);
                columns[i] = wrapped[i];
            }
            columns[fields.length] = ids;
            high = (long) split.file() << SHIFT;
            nextRow = split.firstRow();
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
        public boolean hasNext() {
            while (current == null || at == current.numRows()) {
                try {
                    if (!rows.nextBatch(batch)) {
                        rows.close();
                        return false;
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                ids.reset();
                for (OrcColumnVector column : wrapped) {
                    column.setBatchSize(batch.size);
                }
                for (int r = 0; r < batch.size; r++) {
                    ids.putLong(r, high | (nextRow + r));
                }
                nextRow += batch.size;
                current = new ColumnarBatch(columns, batch.size);
                at = 0;
            }
            return true;
        }

        @Override
        public InternalRow next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return current.getRow(at++).copy();
        }
    }
}
