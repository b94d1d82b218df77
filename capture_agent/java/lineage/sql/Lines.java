package lineage.sql;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.WeakHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.FileSplit;
import org.apache.hadoop.mapred.LineRecordReader;
import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.InputMetrics;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Lines of text files as a DataFrame of (id, value) rows, read in the JVM by Hadoop's line reader
 * (the one Spark's text, CSV and JSON readers use): id = (index of the line's file &lt;&lt; 32) |
 * the line's byte offset in the file, so ids do not depend on how the files are split. The read
 * runs in the tasks of Spark's own read of the files ({@link FileTasks}), each byte range read as
 * the lines that start in it: the same lines in the same tasks in the same order as Spark's, so
 * that an aggregate of floating-point values adds them in Spark's order ({@link Cursor}: a task's
 * lines, which {@link Csv} parses as Spark's CSV reader does). The record engine's
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
     * The lines of the files {@code plain} (Spark's read of them: one file scan) reads, in its
     * tasks; {@link #files} of the last frame made names them by index. The frame's rows are kept
     * as a {@link Read}, which a plan kept for a replay elsewhere holds in their place ({@link
     * KeptPlan}).
     */
    public Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, boolean skipBlank, boolean header) {
        FileTasks tasks = FileTasks.of(plain);
        Read read = new Read(tasks.files, tasks.tasks.toArray(new FileTasks.Piece[0][]), skipBlank, header);
        files = tasks.files;
        RDD<InternalRow> rows = read.rows(spark.sparkContext());
        synchronized (MADE) {
            MADE.put(rows, read);
        }
        StructType schema = new StructType().add("id", DataTypes.LongType, false)
            .add("value", DataTypes.StringType, false);
        return spark.internalCreateDataFrame(rows, schema, false);
    }

    private String[] files = new String[0];

    /** The files of the last frame made, by index, as Hadoop's {@link Path} spells them. */
    public String[] files() {
        return files;
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
        private static final long serialVersionUID = 2L;
        private final String[] files;
        private final FileTasks.Piece[][] tasks;
        final boolean skipBlank;
        final boolean header;

        Read(String[] files, FileTasks.Piece[][] tasks, boolean skipBlank, boolean header) {
            this.files = files;
            this.tasks = tasks;
            this.skipBlank = skipBlank;
            this.header = header;
        }

        /** The rows, read by {@code sc}: a task each of {@link #tasks} (a replay checks first that the
         * files did not change: {@code stored_job}). */
        RDD<InternalRow> rows(SparkContext sc) {
            SerializableConfiguration conf = new SerializableConfiguration(sc.hadoopConfiguration());
            String[] paths = files;
            boolean blank = skipBlank;
            boolean head = header;
            JavaRDD<FileTasks.Piece[]> each = JavaSparkContext.fromSparkContext(sc)
                .parallelize(Arrays.asList(tasks), Math.max(1, tasks.length));
            return each.mapPartitions((Iterator<FileTasks.Piece[]> task) ->
                new LineRows(conf.value(), paths, task.hasNext() ? task.next() : new FileTasks.Piece[0], blank, head),
                true).rdd();
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

    /** The rows of one task ({@link Cursor}'s lines). A row is one UnsafeRow written again for
     * each line (the id, then the line's bytes copied from the reader's buffer), which Spark's scan
     * of the rows copies before asking for the next: a line had cost a copy of its bytes, a
     * string, a boxed id and a row of objects, which the scan then copied into an UnsafeRow all
     * the same. */
    private static final class LineRows implements Iterator<InternalRow> {
        private final Cursor lines;
        private final UnsafeRowWriter writer = new UnsafeRowWriter(2, 256);
        private InternalRow row;

        LineRows(Configuration conf, String[] paths, FileTasks.Piece[] pieces, boolean skipBlank, boolean header) {
            lines = new Cursor(conf, paths, pieces, skipBlank, header, true);
        }

        @Override
        public boolean hasNext() {
            if (row == null && lines.advance()) {
                writer.reset();
                writer.zeroOutNullBytes();
                writer.write(0, lines.id());
                writer.write(1, lines.line.getBytes(), 0, lines.line.getLength());
                row = writer.getRow();
            }
            return row != null;
        }

        @Override
        public InternalRow next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            InternalRow out = row;
            row = null;
            return out;
        }
    }

    /** One task's lines: its pieces' lines in turn ({@link #advance}), counted in the task's input
     * metrics as Spark's readers count theirs (the records only if {@code countRecords}: a scan of
     * Spark's data source API counts the rows it is handed itself); the reader at hand is closed
     * when the task ends, all read or not. */
    static final class Cursor {
        private final Configuration conf;
        private final String[] paths;
        private final FileTasks.Piece[] pieces;
        private final boolean skipBlank;
        private final boolean header;
        private final LongWritable offset = new LongWritable();
        /** The line at hand (its bytes: the reader's buffer, until the next {@link #advance}). */
        final Text line = new Text();
        private final InputMetrics metrics;  // the task's input, as Spark's readers count it (null: no task)
        private int next;
        private LineRecordReader reader;
        private long opened;  // the reader's position when it was opened
        private long high;
        private boolean headerLeft;
        private final boolean countRecords;

        Cursor(Configuration conf, String[] paths, FileTasks.Piece[] pieces, boolean skipBlank, boolean header,
               boolean countRecords) {
            this.countRecords = countRecords;
            this.conf = conf;
            this.paths = paths;
            this.pieces = pieces;
            this.skipBlank = skipBlank;
            this.header = header;
            TaskContext task = TaskContext.get();
            metrics = task == null ? null : task.taskMetrics().inputMetrics();
            if (task != null) {
                task.addTaskCompletionListener(ctx -> {
                    close();
                });
            }
        }

        /** The line at hand's id: its file's index &lt;&lt; 32 | its byte offset. */
        long id() {
            return high | offset.get();
        }

        void close() {
            if (reader != null) {
                try {
                    if (metrics != null) {
                        metrics.incBytesRead(reader.getPos() - opened);
                    }
                    reader.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                reader = null;
            }
        }

        /** Moves to the next line (false: none left; the last reader closed). */
        boolean advance() {
            try {
                while (true) {
                    if (reader == null || !reader.next(offset, line)) {
                        close();
                        if (next == pieces.length) {
                            return false;
                        }
                        FileTasks.Piece piece = pieces[next++];
                        Path path = new Path(paths[piece.file()]);
                        FileSplit split = new FileSplit(path, piece.start(), piece.length(), (String[]) null);
                        reader = new LineRecordReader(conf, split);
                        opened = reader.getPos();
                        high = (long) piece.file() << SHIFT;
                        headerLeft = header && piece.start() == 0;
                        continue;
                    }
                    if (skipBlank && blank(line)) {
                        continue;
                    }
                    if (headerLeft) {
                        headerLeft = false;
                        continue;
                    }
                    if (countRecords && metrics != null) {
                        metrics.incRecordsRead(1);
                    }
                    return true;
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
