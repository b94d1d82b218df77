package lineage.sql;

import java.nio.charset.Charset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.csv.CSVOptions;
import org.apache.spark.sql.catalyst.csv.UnivocityParser;
import org.apache.spark.sql.catalyst.util.FailureSafeParser;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * CSV files as a table of rows with their lines' ids ({@link ParsedLines}): each task parses the
 * lines of its pieces of files with Spark's own CSV parser ({@code UnivocityParser} in a {@code
 * FailureSafeParser}, as Spark's CSV scan makes them: the read's options, the session's time zone,
 * column pruning and filter pushdown), only the columns the query reads: a line costs what it
 * costs Spark's reader. (Parsed by {@code from_csv} over rows of lines, each field a query read
 * was parsed from the line on its own, and a filter's field once more: the CSV query of {@code
 * bench/dataframe_capture.py} ran 1.3x the plain one with nothing recorded.)
 */
public final class Csv extends ParsedLines {
    /** Made through reflection: the class lives in the agent's own class loader. */
    public Csv() {
    }

    /**
     * The rows of the CSV files {@code plain} (Spark's read of them as text: one file scan) reads,
     * in its tasks, with {@code schema}'s fields and the lines' ids in column {@code idName}, last
     * ({@link FileRowsTable#frame}); {@code options}: the read's (header, sep, quote); {@code
     * location}: the paths read, which the coarse listener records as a read of CSV.
     */
    public Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, StructType schema, String idName,
                              Map<String, String> options, String location) {
        HashMap<String, String> given = new HashMap<>(options);
        return frame(spark, plain, "csv", schema, idName, location, files -> new Makes(files, schema, given, idName + "_row"));
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
            SQLConf conf = SparkSession.active().sessionState().conf();
            CSVOptions parsed = new CSVOptions(scala.collection.immutable.Map$.MODULE$.from(
                CollectionConverters.asScala(options)), conf.csvColumnPruning(), conf.sessionLocalTimeZone(),
                conf.columnNameOfCorruptRecord());
            Read columns = Read.of(read, filters, idName, parsed.columnNameOfCorruptRecord(), conf.csvFilterPushDown());
            return new Readers(FileRowsTable.Readers.shipped(SparkSession.active().sessionState().newHadoopConf()), paths,
                data, columns, parsed);
        }
    }

    /** Makes a task's reader of its split: rows of the columns read, then the id if read. */
    private record Readers(Broadcast<SerializableConfiguration> conf, String[] paths, StructType data, Read read,
                           CSVOptions options) implements PartitionReaderFactory {
        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            Lines.Cursor lines = new Lines.Cursor(conf.value().value(), paths, ((Split) partition).pieces(), true,
                options.headerFlag(), false);
            String corrupt = options.columnNameOfCorruptRecord();
            UnivocityParser univocity = new UnivocityParser(without(data, corrupt), without(read.required(), corrupt),
                options, CollectionConverters.asScala(List.of(read.pushed())).toList());
            scala.Function1<String, Option<InternalRow>> parse = univocity.parse();
            FailureSafeParser<String> parser = new FailureSafeParser<>(line -> parse.apply(line).toList(),
                options.parseMode(), read.required(), corrupt);
            Charset charset = Charset.forName(options.charset());
            return new Rows(lines, text -> parser.parse(new String(text.getBytes(), 0, text.getLength(), charset)),
                read.withId());
        }
    }
}
