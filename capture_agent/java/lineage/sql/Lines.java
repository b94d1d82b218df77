package lineage.sql;

import java.io.IOException;
import java.io.Serializable;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.WeakHashMap;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.FileInputFormat;
import org.apache.hadoop.mapred.FileSplit;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.TextInputFormat;
import org.apache.spark.Partition;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.HadoopPartition;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import scala.Tuple2;

/**
 * Lines of text files as a DataFrame of (id, value) rows, read in the JVM from the (byte offset,
 * line) pairs of Hadoop's TextInputFormat: id = (index of the line's file &lt;&lt; 32) | the line's
 * byte offset in the file, so ids do not depend on how the files are split. The record engine's
 * {@code file_lines} layout reads the lines back from these ids. CSV and JSON Lines leave out the
 * lines Spark's readers leave out: blank lines (only characters up to U+0020) and, for CSV with a
 * header, the first non-blank line of each file.
 */
public final class Lines {
    private static final int SHIFT = 32;

    /** Made through reflection: the class lives in the agent's own class loader. */
    public Lines() {
    }

    /**
     * {@code raw}: a HadoopRDD of TextInputFormat; {@code fileOf[p]}: the index of partition p's
     * file, {@code fileStart[p]}: whether its split starts the file. {@code paths}, {@code
     * splitBytes}, {@code minPartitions} and {@code files} (the files' paths by index) say how
     * {@code raw} was made: the frame's rows are kept as a {@link Read}, which a plan kept for a
     * replay elsewhere holds in their place ({@link KeptPlan}).
     */
    public Dataset<Row> frame(SparkSession spark, RDD<Tuple2<LongWritable, Text>> raw, int[] fileOf,
                              boolean[] fileStart, boolean skipBlank, boolean header, String paths,
                              long splitBytes, int minPartitions, String[] files) {
        Read read = new Read(paths, splitBytes, minPartitions, files, fileOf, fileStart, skipBlank, header);
        RDD<InternalRow> rows = rows(raw, read);
        synchronized (MADE) {
            MADE.put(rows, read);
        }
        StructType schema = new StructType().add("id", DataTypes.LongType, false)
            .add("value", DataTypes.StringType, false);
        return spark.internalCreateDataFrame(rows, schema, false);
    }

    private static RDD<InternalRow> rows(RDD<Tuple2<LongWritable, Text>> raw, Read read) {
        int[] fileOf = read.fileOf;
        boolean[] fileStart = read.fileStart;
        boolean skipBlank = read.skipBlank;
        boolean header = read.header;
        JavaRDD<InternalRow> rows = raw.toJavaRDD().mapPartitionsWithIndex(
            (Integer p, Iterator<Tuple2<LongWritable, Text>> pairs) ->
                new LineRows(pairs, (long) fileOf[p] << SHIFT, skipBlank, header && fileStart[p]), false);
        return rows.rdd();
    }

    /** The rows' RDDs {@link #frame} made, and how (weakly: an RDD no plan holds goes). */
    private static final Map<RDD<?>, Read> MADE = new WeakHashMap<>();

    /** How {@link #frame} made {@code rdd}, or null when it did not. */
    static Read readOf(RDD<?> rdd) {
        synchronized (MADE) {
            return MADE.get(rdd);
        }
    }

    /** How a frame's rows were read: enough to read them again in another process. */
    static final class Read implements Serializable {
        private static final long serialVersionUID = 1L;
        private final String paths;
        private final long splitBytes;
        private final int minPartitions;
        private final String[] files;
        final int[] fileOf;
        final boolean[] fileStart;
        final boolean skipBlank;
        final boolean header;

        Read(String paths, long splitBytes, int minPartitions, String[] files, int[] fileOf, boolean[] fileStart,
             boolean skipBlank, boolean header) {
            this.paths = paths;
            this.splitBytes = splitBytes;
            this.minPartitions = minPartitions;
            this.files = files;
            this.fileOf = fileOf;
            this.fileStart = fileStart;
            this.skipBlank = skipBlank;
            this.header = header;
        }

        /** The rows again, read by {@code sc}, split as they were (else an IOException says so). */
        RDD<InternalRow> rows(SparkContext sc) throws IOException {
            JobConf conf = new JobConf(sc.hadoopConfiguration());
            conf.setLong("mapreduce.input.fileinputformat.split.minsize", splitBytes);
            FileInputFormat.setInputPaths(conf, paths);
            RDD<Tuple2<LongWritable, Text>> raw = sc.hadoopRDD(conf, TextInputFormat.class, LongWritable.class,
                Text.class, minPartitions);
            Partition[] parts = raw.partitions();
            boolean same = parts.length == fileOf.length;
            for (int p = 0; same && p < parts.length; p++) {
                FileSplit split = (FileSplit) ((HadoopPartition) parts[p]).inputSplit().value();
                same = split.getPath().toString().equals(files[fileOf[p]]) && (split.getStart() == 0) == fileStart[p];
            }
            if (!same) {
                throw new IOException("the lines of " + paths + " are split otherwise here than at capture (" + parts.length
                    + " splits, " + fileOf.length + " then): their files changed");
            }
            return Lines.rows(raw, this);
        }
    }

    static boolean blank(Text line) {
        byte[] bytes = line.getBytes();
        for (int i = 0, n = line.getLength(); i < n; i++) {
            if ((bytes[i] & 0xff) > 0x20) {
                return false;
            }
        }
        return true;
    }

    /** The rows of one split: the line's bytes are copied (the record reader reuses its buffer). */
    private static final class LineRows implements Iterator<InternalRow> {
        private final Iterator<Tuple2<LongWritable, Text>> pairs;
        private final long high;
        private final boolean skipBlank;
        private boolean headerLeft;
        private InternalRow next;

        LineRows(Iterator<Tuple2<LongWritable, Text>> pairs, long high, boolean skipBlank, boolean header) {
            this.pairs = pairs;
            this.high = high;
            this.skipBlank = skipBlank;
            this.headerLeft = header;
        }

        @Override
        public boolean hasNext() {
            while (next == null && pairs.hasNext()) {
                Tuple2<LongWritable, Text> pair = pairs.next();
                Text line = pair._2();
                if (skipBlank && blank(line)) {
                    continue;
                }
                if (headerLeft) {
                    headerLeft = false;
                    continue;
                }
                byte[] copy = Arrays.copyOf(line.getBytes(), line.getLength());
                next = new GenericInternalRow(new Object[] {high | pair._1().get(), UTF8String.fromBytes(copy)});
            }
            return next != null;
        }

        @Override
        public InternalRow next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            InternalRow row = next;
            next = null;
            return row;
        }
    }
}
