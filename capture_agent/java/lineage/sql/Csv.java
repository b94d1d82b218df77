package lineage.sql;

import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.csv.CSVOptions;
import org.apache.spark.sql.catalyst.csv.UnivocityParser;
import org.apache.spark.sql.catalyst.expressions.ExprUtils;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
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
import org.apache.spark.util.SerializableConfiguration;

import scala.Option;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;

/**
 * CSV files as a table of rows with their lines' ids ({@link FileRowsTable}): each task reads the
 * lines of its pieces of files ({@link Lines.Cursor}: Spark's own tasks, the lines Spark's CSV
 * reader makes rows of, id = file index &lt;&lt; 32 | byte offset) and parses each with Spark's
 * own CSV parser ({@code UnivocityParser} in a {@code FailureSafeParser}, as Spark's CSV scan
 * makes them: the read's options, the session's time zone, column pruning and filter pushdown),
 * only the columns the query reads: a line costs what it costs Spark's reader. (Parsed by {@code
 * from_csv} over rows of lines, each field a query read was parsed from the line on its own, and
 * a filter's field once more: the CSV query of {@code bench/dataframe_capture.py} ran 1.3x the
 * plain one with nothing recorded.) The record engine's {@code file_lines} layout reads the
 * lines back from the ids.
 */
public final class Csv {
    /** Made through reflection: the class lives in the agent's own class loader. */
    public Csv() {
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
     * The rows of the CSV files {@code plain} (Spark's read of them as text: one file scan) reads,
     * in its tasks, with {@code schema}'s fields and the lines' ids in column {@code idName}, last
     * ({@link FileRowsTable#frame}); {@code
     * options}: the read's (header, sep, quote); {@code location}: the paths read, which the
     * coarse listener records as a read of CSV.
     */
    public Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, StructType schema, String idName,
                              Map<String, String> options, String location) {
        ExprUtils.verifyColumnNameOfCorruptRecord(schema, SQLConf.get().columnNameOfCorruptRecord());
        FileTasks tasks = FileTasks.of(plain);
        files = tasks.files;
        List<Split> splits = new ArrayList<>();
        for (FileTasks.Piece[] pieces : tasks.tasks) {
            splits.add(new Split(pieces));
        }
        FileRowsTable table = new FileRowsTable("csv", files.length, tasks.bytes(), splits,
            schema.add(idName + "_row", DataTypes.LongType, false),
            new Makes(files, schema, new HashMap<>(options), idName + "_row"), location, location);
        return table.frame(spark, idName);
    }

    /** Makes, in the session planning the query, the tasks' readers of the columns it reads. */
    private record Makes(String[] paths, StructType data, HashMap<String, String> options, String idName)
            implements FileRowsTable.Readers {
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
            CSVOptions parsed = new CSVOptions(scala.collection.immutable.Map$.MODULE$.from(
                CollectionConverters.asScala(options)), conf.csvColumnPruning(), conf.sessionLocalTimeZone(),
                conf.columnNameOfCorruptRecord());
            String corrupt = parsed.columnNameOfCorruptRecord();  // a column the parser fills, as Spark's scan:
            if (required.fields().length == 1 && required.fieldNames()[0].equals(corrupt)) {  // refused alone,
                Throwable refused = QueryCompilationErrors.queryFromRawFilesIncludeCorruptRecordColumnError();
                throw new UnsupportedOperationException(refused.getMessage(), refused);
            }
            List<Filter> pushed = new ArrayList<>();  // and not filtered on while parsing
            Set<String> names = Set.of(required.fieldNames());
            for (Filter filter : conf.csvFilterPushDown() ? filters : new Filter[0]) {
                List<String> refs = List.of(filter.references());
                if (names.containsAll(refs) && !refs.contains(corrupt)) {
                    pushed.add(filter);
                }
            }
            SerializableConfiguration hadoop = new SerializableConfiguration(spark.sessionState().newHadoopConf());
            return new Readers(hadoop, paths, data, required, parsed, pushed.toArray(new Filter[0]), withId);
        }
    }

    /** Makes a task's reader of its split: rows of the columns {@code required}, then the id if {@code withId}. */
    private record Readers(SerializableConfiguration conf, String[] paths, StructType data, StructType required,
                           CSVOptions options, Filter[] filters, boolean withId)
            implements PartitionReaderFactory {
        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new Rows(this, ((Split) partition).pieces());
        }
    }

    /** A split's rows: each line's parsed row, as Spark's CSV scan parses it, and the line's id. */
    private static final class Rows implements PartitionReader<InternalRow> {
        private final Lines.Cursor lines;
        private final FailureSafeParser<String> parser;
        private final Charset charset;
        private final boolean withId;
        private final SpecificInternalRow id = new SpecificInternalRow(
            new StructType().add("id", DataTypes.LongType, false));
        private final JoinedRow joined = new JoinedRow();
        private InternalRow row;

        Rows(Readers readers, FileTasks.Piece[] pieces) {
            Configuration conf = readers.conf().value();
            lines = new Lines.Cursor(conf, readers.paths(), pieces, true, readers.options().headerFlag(),
                false);
            String corrupt = readers.options().columnNameOfCorruptRecord();  // a column the parser fills, not the file
            StructType data = without(readers.data(), corrupt);
            StructType required = without(readers.required(), corrupt);
            UnivocityParser univocity = new UnivocityParser(data, required, readers.options(),
                CollectionConverters.asScala(List.of(readers.filters())).toList());
            scala.Function1<String, Option<InternalRow>> parse = univocity.parse();
            parser = new FailureSafeParser<>(line -> parse.apply(line).toList(), readers.options().parseMode(),
                readers.required(), corrupt);
            charset = Charset.forName(readers.options().charset());
            withId = readers.withId();
        }

        private static StructType without(StructType type, String name) {
            List<StructField> kept = new ArrayList<>();
            for (StructField field : type.fields()) {
                if (!field.name().equals(name)) {
                    kept.add(field);
                }
            }
            return new StructType(kept.toArray(new StructField[0]));
        }

        @Override
        public boolean next() {
            while (lines.advance()) {
                Iterator<InternalRow> out = parser.parse(new String(lines.line.getBytes(), 0, lines.line.getLength(), charset));
                if (out.hasNext()) {  // none: the filters pushed to the parser fail on the line
                    InternalRow parsed = out.next();
                    if (withId) {
                        id.setLong(0, lines.id());
                        row = joined.apply(parsed, id);
                    } else {
                        row = parsed;
                    }
                    return true;
                }
            }
            return false;
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
