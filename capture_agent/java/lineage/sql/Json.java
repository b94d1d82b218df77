package lineage.sql;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.io.Text;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.ExprUtils;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.json.CreateJacksonParser;
import org.apache.spark.sql.catalyst.json.JSONOptionsInRead;
import org.apache.spark.sql.catalyst.json.JacksonParser;
import org.apache.spark.sql.catalyst.util.FailureSafeParser;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.errors.QueryCompilationErrors;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.SerializableConfiguration;

import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * JSON Lines files as a table of rows with their lines' ids ({@link FileRowsTable}), as {@link
 * Csv} reads CSV: each task reads the lines of its pieces of files ({@link Lines.Cursor}: Spark's
 * own tasks) and parses each with Spark's own JSON parser ({@code JacksonParser} in a {@code
 * FailureSafeParser}, as Spark's JSON scan makes them: the session's time zone and corrupt-record
 * column, column pruning and filter pushdown), so that a line makes the rows Spark's reader makes
 * of it: none for a blank line, one for an object or a malformed line, one for each object of a
 * top-level array. Every row a line makes has the line's id (file index &lt;&lt; 32 | byte
 * offset). (Parsed by {@code from_json} over rows of lines, an array's objects were one malformed
 * row.)
 */
public final class Json {
    /** Made through reflection: the class lives in the agent's own class loader. */
    public Json() {
    }

    private String[] files = new String[0];

    /** The files of the last frame made, by index, as Hadoop's {@code Path} spells them. */
    public String[] files() {
        return files;
    }

    /** One task's pieces of files. */
    record Split(FileTasks.Piece[] pieces) implements InputPartition {
    }

    /**
     * The rows of the JSON Lines files {@code plain} (Spark's read of them as text: one file scan)
     * reads, in its tasks, with {@code schema}'s fields (Spark's schema of the JSON read) and the
     * lines' ids in column {@code idName}, last ({@link FileRowsTable#frame}); {@code location}: the
     * paths read, which the coarse listener records as a read of JSON.
     */
    public Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, StructType schema, String idName,
                              String location) {
        ExprUtils.verifyColumnNameOfCorruptRecord(schema, SQLConf.get().columnNameOfCorruptRecord());
        FileTasks tasks = FileTasks.of(plain);
        files = tasks.files;
        List<Split> splits = new ArrayList<>();
        for (FileTasks.Piece[] pieces : tasks.tasks) {
            splits.add(new Split(pieces));
        }
        FileRowsTable table = new FileRowsTable("json", files.length, tasks.bytes(), splits,
            schema.add(idName + "_row", DataTypes.LongType, false), new Makes(files, schema, idName + "_row"),
            location, location);
        return table.frame(spark, idName);
    }

    /** Makes, in the session planning the query, the tasks' readers of the columns it reads. */
    private record Makes(String[] paths, StructType data, String idName) implements FileRowsTable.Readers {
        @Override
        public boolean skips() {
            return true;
        }

        @Override
        public PartitionReaderFactory of(StructType read, Filter[] filters) {
            SparkSession spark = SparkSession.active();
            SQLConf conf = spark.sessionState().conf();
            StructField[] fields = read.fields();  // the table's order: the id, if read, last
            boolean withId = fields.length > 0 && fields[fields.length - 1].name().equals(idName);
            StructType required = new StructType(Arrays.copyOf(fields, fields.length - (withId ? 1 : 0)));
            JSONOptionsInRead options = options(conf);
            String corrupt = options.columnNameOfCorruptRecord();  // a column the parser fills, as Spark's scan:
            if (required.fields().length == 1 && required.fieldNames()[0].equals(corrupt)) {  // refused alone,
                Throwable refused = QueryCompilationErrors.queryFromRawFilesIncludeCorruptRecordColumnError();
                throw new UnsupportedOperationException(refused.getMessage(), refused);
            }
            List<Filter> pushed = new ArrayList<>();  // and not filtered on while parsing
            Set<String> names = Set.of(required.fieldNames());
            for (Filter filter : conf.jsonFilterPushDown() ? filters : new Filter[0]) {
                List<String> refs = List.of(filter.references());
                if (names.containsAll(refs) && !refs.contains(corrupt)) {
                    pushed.add(filter);
                }
            }
            SerializableConfiguration hadoop = new SerializableConfiguration(spark.sessionState().newHadoopConf());
            return new Readers(hadoop, paths, required, pushed.toArray(new Filter[0]), withId);
        }
    }

    /** The options of a JSON read with none given, as Spark's scan makes them in this session. */
    static JSONOptionsInRead options(SQLConf conf) {
        Map<String, String> none = new HashMap<>();
        return new JSONOptionsInRead(scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(none)),
            conf.sessionLocalTimeZone(), conf.columnNameOfCorruptRecord());
    }

    /** Makes a task's reader of its split: rows of the columns {@code required}, then the id if {@code withId}. */
    private record Readers(SerializableConfiguration conf, String[] paths, StructType required, Filter[] filters,
                           boolean withId) implements PartitionReaderFactory {
        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new Rows(this, ((Split) partition).pieces());
        }
    }

    /** A split's rows: each line's parsed rows, as Spark's JSON scan parses it, each with the line's id. */
    private static final class Rows implements PartitionReader<InternalRow> {
        private final Lines.Cursor lines;
        private final FailureSafeParser<Text> parser;
        private final boolean withId;
        private final SpecificInternalRow id = new SpecificInternalRow(
            new StructType().add("id", DataTypes.LongType, false));
        private final JoinedRow joined = new JoinedRow();
        private Iterator<InternalRow> rows;  // the line at hand's rows still to give
        private InternalRow row;

        Rows(Readers readers, FileTasks.Piece[] pieces) {
            lines = new Lines.Cursor(readers.conf().value(), readers.paths(), pieces, true, false, false);
            JSONOptionsInRead options = options(SQLConf.get());
            String corrupt = options.columnNameOfCorruptRecord();  // a column the parser fills, not the file
            List<StructField> parsed = new ArrayList<>();
            for (StructField field : readers.required().fields()) {
                if (!field.name().equals(corrupt)) {
                    parsed.add(field);
                }
            }
            JacksonParser jackson = new JacksonParser(new StructType(parsed.toArray(new StructField[0])), options,
                true, CollectionConverters.asScala(List.of(readers.filters())).toList());
            parser = new FailureSafeParser<>(text -> jackson.parse(text, CreateJacksonParser::text,
                t -> UTF8String.fromBytes(t.getBytes(), 0, t.getLength())), options.parseMode(), readers.required(),
                corrupt);
            withId = readers.withId();
        }

        @Override
        public boolean next() {
            while (rows == null || !rows.hasNext()) {
                if (!lines.advance()) {
                    return false;
                }
                rows = parser.parse(lines.line);  // none: the filters pushed to the parser fail on the line
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
