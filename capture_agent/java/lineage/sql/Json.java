package lineage.sql;

import java.util.HashMap;
import java.util.List;

import org.apache.hadoop.io.Text;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.json.CreateJacksonParser;
import org.apache.spark.sql.catalyst.json.JSONOptionsInRead;
import org.apache.spark.sql.catalyst.json.JacksonParser;
import org.apache.spark.sql.catalyst.util.FailureSafeParser;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.SerializableConfiguration;

import scala.jdk.javaapi.CollectionConverters;

/**
 * JSON Lines files as a table of rows with their lines' ids ({@link ParsedLines}), as {@link Csv}
 * reads CSV: each task parses the lines of its pieces of files with Spark's own JSON parser
 * ({@code JacksonParser} in a {@code FailureSafeParser}, as Spark's JSON scan makes them: the
 * session's time zone and corrupt-record column, column pruning and filter pushdown), so that a
 * line makes the rows Spark's reader makes of it: none for a blank line, one for an object or a
 * malformed line, one for each object of a top-level array, each with the line's id. (Parsed by
 * {@code from_json} over rows of lines, an array's objects were one malformed row.)
 */
public final class Json extends ParsedLines {
    /** Made through reflection: the class lives in the agent's own class loader. */
    public Json() {
    }

    /**
     * The rows of the JSON Lines files {@code plain} (Spark's read of them as text: one file scan)
     * reads, in its tasks, with {@code schema}'s fields (Spark's schema of the JSON read) and the
     * lines' ids in column {@code idName}, last ({@link FileRowsTable#frame}); {@code location}: the
     * paths read, which the coarse listener records as a read of JSON.
     */
    public Dataset<Row> frame(SparkSession spark, Dataset<Row> plain, StructType schema, String idName,
                              String location) {
        return frame(spark, plain, "json", schema, idName, location, files -> new Makes(files, idName + "_row"));
    }

    /** Makes, in the session planning the query, the tasks' readers of the columns it reads. */
    private record Makes(String[] paths, String idName) implements FileRowsTable.Readers {
        @Override
        public boolean skips() {
            return true;
        }

        @Override
        public PartitionReaderFactory of(StructType read, Filter[] filters) {
            SparkSession spark = SparkSession.active();
            SQLConf conf = spark.sessionState().conf();
            JSONOptionsInRead options = options(conf);
            Read columns = Read.of(read, filters, idName, options.columnNameOfCorruptRecord(), conf.jsonFilterPushDown());
            return new Readers(FileRowsTable.Readers.shipped(spark.sessionState().newHadoopConf()), paths, columns,
                options);
        }
    }

    /** The options of a JSON read with none given, as Spark's scan makes them in this session. */
    static JSONOptionsInRead options(SQLConf conf) {
        return new JSONOptionsInRead(scala.collection.immutable.Map$.MODULE$.from(
            CollectionConverters.asScala(new HashMap<String, String>())), conf.sessionLocalTimeZone(),
            conf.columnNameOfCorruptRecord());
    }

    /** Makes a task's reader of its split ({@code options}: made where the query was planned, as
     * Spark's scan makes them): rows of the columns read, then the id if read. */
    private record Readers(Broadcast<SerializableConfiguration> conf, String[] paths, Read read,
                           JSONOptionsInRead options)
            implements PartitionReaderFactory {
        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            Lines.Cursor lines = new Lines.Cursor(conf.value().value(), paths, ((Split) partition).pieces(), true, false, false);
            String corrupt = options.columnNameOfCorruptRecord();
            JacksonParser jackson = new JacksonParser(without(read.required(), corrupt), options, true,
                CollectionConverters.asScala(List.of(read.pushed())).toList());
            FailureSafeParser<Text> parser = new FailureSafeParser<>(text -> jackson.parse(text,
                CreateJacksonParser::text, t -> UTF8String.fromBytes(t.getBytes(), 0, t.getLength())),
                options.parseMode(), read.required(), corrupt);
            return new Rows(lines, parser::parse, read.withId());
        }
    }
}
