package lineage.sql;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import org.apache.hadoop.io.Text;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.ExprUtils;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.errors.QueryCompilationErrors;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.collection.Iterator;

/**
 * Lines of text files parsed into rows by one of Spark's own parsers ({@link Csv}, {@link Json}),
 * as a table of the rows with their lines' ids ({@link FileRowsTable}): each task reads the lines
 * of its pieces of files ({@link Lines.Cursor}: Spark's own tasks, the lines Spark's reader makes
 * rows of, id = file index &lt;&lt; 32 | byte offset) and parses each as Spark's scan of the
 * format does, only the columns the query reads; every row a line makes has the line's id. The
 * record engine's {@code file_lines} layout reads the lines back from the ids.
 */
public abstract class ParsedLines {
    private String[] files = new String[0];

    /** The files of the last frame made, by index, as Hadoop's {@code Path} spells them. */
    public String[] files() {
        return files;
    }

    /** One task's pieces of files. */
    record Split(FileTasks.Piece[] pieces) implements InputPartition {
    }

    /**
     * The rows of the files {@code plain} (Spark's read of them as text: one file scan) reads, in
     * its tasks, with {@code schema}'s fields (Spark's schema of the read of {@code format}) and the
     * lines' ids in column {@code idName}, last ({@link FileRowsTable#frame}), read by {@code
     * makes}'s readers (given the files by index and the id column's name in the table); {@code
     * location}: the paths read, which the coarse listener records as a read of {@code format}.
     */
    Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, String format, StructType schema, String idName,
                       String location, Function<String[], FileRowsTable.Readers> makes) {
        ExprUtils.verifyColumnNameOfCorruptRecord(schema, SQLConf.get().columnNameOfCorruptRecord());
        FileTasks tasks = FileTasks.of(plain);
        files = tasks.files;
        List<Split> splits = new ArrayList<>();
        for (FileTasks.Piece[] pieces : tasks.tasks) {
            splits.add(new Split(pieces));
        }
        FileRowsTable table = new FileRowsTable(format, files.length, tasks.bytes(), splits,
            schema.add(idName + "_row", DataTypes.LongType, false), makes.apply(files), location, location);
        return table.frame(spark, idName);
    }

    /**
     * What a query reads of the table: the columns {@code required} (the table's {@code read}
     * columns but the id), whether it reads the id ({@code idName}), and the filters the parser is
     * given ({@code pushdown}: the session pushes them), those on required columns but the
     * corrupt-record one ({@code corrupt}, a column the parser fills). A read of that column alone
     * is refused, as Spark's scan refuses it.
     */
    record Read(StructType required, boolean withId, Filter[] pushed) implements Serializable {
        static Read of(StructType read, Filter[] filters, String idName, String corrupt, boolean pushdown) {
            StructField[] fields = read.fields();  // the table's order: the id, if read, last
            boolean withId = fields.length > 0 && fields[fields.length - 1].name().equals(idName);
            StructType required = new StructType(Arrays.copyOf(fields, fields.length - (withId ? 1 : 0)));
            if (required.fields().length == 1 && required.fieldNames()[0].equals(corrupt)) {
                Throwable refused = QueryCompilationErrors.queryFromRawFilesIncludeCorruptRecordColumnError();
                throw new UnsupportedOperationException(refused.getMessage(), refused);
            }
            List<Filter> pushed = new ArrayList<>();
            Set<String> names = Set.of(required.fieldNames());
            for (Filter filter : pushdown ? filters : new Filter[0]) {
                List<String> refs = List.of(filter.references());
                if (names.containsAll(refs) && !refs.contains(corrupt)) {
                    pushed.add(filter);
                }
            }
            return new Read(required, withId, pushed.toArray(new Filter[0]));
        }
    }

    /** {@code type} without its field {@code name} (the corrupt-record column: the parser fills it, not the file). */
    static StructType without(StructType type, String name) {
        List<StructField> kept = new ArrayList<>();
        for (StructField field : type.fields()) {
            if (!field.name().equals(name)) {
                kept.add(field);
            }
        }
        return new StructType(kept.toArray(new StructField[0]));
    }

    /** A split's rows: the rows {@code parse} makes of each line (none: a blank line, or the
     * filters pushed to the parser fail on it), each with the line's id if {@code withId}. */
    static final class Rows implements PartitionReader<InternalRow> {
        private final Lines.Cursor lines;
        private final Function<Text, Iterator<InternalRow>> parse;
        private final boolean withId;
        private final SpecificInternalRow id = new SpecificInternalRow(
            new StructType().add("id", DataTypes.LongType, false));
        private final JoinedRow joined = new JoinedRow();
        private Iterator<InternalRow> rows;  // the line at hand's rows still to give
        private InternalRow row;

        Rows(Lines.Cursor lines, Function<Text, Iterator<InternalRow>> parse, boolean withId) {
            this.lines = lines;
            this.parse = parse;
            this.withId = withId;
        }

        @Override
        public boolean next() {
            while (rows == null || !rows.hasNext()) {
                if (!lines.advance()) {
                    return false;
                }
                rows = parse.apply(lines.line);
            }
            InternalRow parsed = rows.next();
            if (withId) {
                id.setLong(0, lines.id());
                row = joined.apply(parsed, id);
            } else {
                row = parsed;
            }
            return true;
        }

        @Override
        public InternalRow get() {
            return row;
        }

        @Override
        public void close() {
            lines.close();
        }
    }
}
