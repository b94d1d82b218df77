package lineage.sql;

import java.io.Serializable;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset$;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.util.SerializableConfiguration;

import scala.Option;
import scala.reflect.ClassTag$;

/**
 * Files read by one of the agent's readers of rows with their ids ({@link Orc}, {@link Parquet}),
 * as a table of Spark's data source API: Spark asks it for the columns a query reads only, and
 * its scan is its splits, one task each (those of Spark's own read of the files, {@link
 * FileTasks}), whose readers hand Spark column batches. A reader that skips parts of files by
 * the query's filters ({@link Readers#skips}: Parquet's row groups by their statistics) is given
 * them, and Spark applies them all the same to the rows read. Its size is estimated as Spark estimates
 * its own scans of files (so that a join of it is planned as Spark plans the plain one: a small
 * table broadcast). Serializable, so that a kept plan holds it ({@link KeptPlan}).
 */
final class FileRowsTable implements Serializable, SupportsRead, ScanBuilder, SupportsPushDownRequiredColumns,
        SupportsPushDownFilters, Scan, SupportsReportStatistics, Batch {
    private static final long serialVersionUID = 1L;

    /** Makes, where the query is planned, the factory of its tasks' readers of the columns {@code
     * read}, given the query's {@code filters} on them if it {@link #skips}. */
    interface Readers extends Serializable {
        PartitionReaderFactory of(StructType read, Filter[] filters);

        /** Whether its readers skip parts of files none of whose rows can pass the filters. */
        default boolean skips() {
            return false;
        }

        /** {@code conf} broadcast for a scan's tasks, as Spark's own file scans ship it: a factory that
         * held the configuration itself would serialize it (gzipped, a thousand settings) into each
         * stage's task binary. The broadcast of an earlier scan with the same settings when there is
         * one: every read of every query would otherwise ship the same settings again. */
        static Broadcast<SerializableConfiguration> shipped(Configuration conf) {
            SparkContext sc = SparkSession.active().sparkContext();
            return SHIPPED.get(new Shipped(Reused.application(sc), Reused.settings(conf)), () ->
                sc.broadcast(new SerializableConfiguration(conf), ClassTag$.MODULE$.apply(SerializableConfiguration.class)));
        }
    }

    /** A configuration shipped to an application's executors: its settings. */
    private record Shipped(String application, Map<String, String> settings) {
    }

    private static final Reused<Shipped, Broadcast<SerializableConfiguration>> SHIPPED = new Reused<>(16);

    private final String format;
    private final int files;
    private final long bytes;
    private final List<? extends InputPartition> splits;
    private final StructType schema;
    private final Readers readers;
    private final String name;
    private final String location;
    private StructType read;
    private Filter[] pushed = new Filter[0];

    /** {@code format}'s {@code files} files ({@code bytes} in all) read in {@code splits}, with
     * {@code schema}'s columns (the files' and, last, the id); {@code name}: the catalog table's, or
     * the folders'; {@code location}: the folders read (null for a catalog table). */
    FileRowsTable(String format, int files, long bytes, List<? extends InputPartition> splits, StructType schema,
                  Readers readers, String name, String location) {
        this.format = format;
        this.files = files;
        this.bytes = bytes;
        this.splits = splits;
        this.schema = schema;
        this.readers = readers;
        this.name = name;
        this.location = location;
        this.read = schema;
    }

    /**
     * This table read in {@code spark}: its columns but the id (the last, named {@code id + "_row"})
     * and then the id as {@code id}, made by a Project of its own right above the read, where
     * what-if replays filter ({@code frame_io.replayed}). One call from Python: a column named there
     * costs py4j round trips.
     */
    Dataset<Row> frame(SparkSession spark, String id) {
        Dataset<Row> read = Dataset$.MODULE$.ofRows(spark,
            DataSourceV2Relation$.MODULE$.create(this, Option.empty(), Option.empty()));
        StructField[] fields = schema.fields();
        Column[] columns = new Column[fields.length];
        for (int i = 0; i + 1 < fields.length; i++) {
            columns[i] = read.col("`" + fields[i].name().replace("`", "``") + "`");
        }
        columns[fields.length - 1] = read.col("`" + fields[fields.length - 1].name() + "`").as(id);
        return read.select(columns);
    }

    /** The catalog table's name, or the folders read; the plan shows it as {@code lineage_<format>(...)}. */
    @Override
    public String name() {
        return name;
    }

    /** The folders read, if not a catalog table's (the coarse listener records them, in the format). */
    @Override
    public Map<String, String> properties() {
        return location == null ? Map.of() : Map.of(TableCatalog.PROP_LOCATION, location,
            TableCatalog.PROP_PROVIDER, format);
    }

    @Override
    public String description() {
        return "lineage_" + format + "(" + files + (files == 1 ? " file)" : " files)");
    }

    @Override
    public StructType schema() {
        return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return Set.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        return new FileRowsTable(format, files, bytes, splits, schema, readers, name, location);
    }

    @Override
    public void pruneColumns(StructType required) {
        read = required;
    }

    /** Every filter is still Spark's to apply to the rows read: a reader skips parts of files only. */
    @Override
    public Filter[] pushFilters(Filter[] filters) {
        if (readers.skips()) {
            pushed = filters;
        }
        return filters;
    }

    @Override
    public Filter[] pushedFilters() {
        return pushed;
    }

    @Override
    public Scan build() {
        return this;
    }

    @Override
    public StructType readSchema() {
        return read;
    }

    /** As Spark's scans of files estimate theirs: the files' bytes (times the session's compression
     * factor), in the share of the columns read (by their default sizes; the ids not counted, as
     * the plain read has none). */
    @Override
    public Statistics estimateStatistics() {
        double share = (double) width(read) / Math.max(1, width(schema));
        long size = (long) (SQLConf.get().fileCompressionFactor() * bytes * share);
        return new Statistics() {
            @Override
            public OptionalLong sizeInBytes() {
                return OptionalLong.of(Math.max(1, size));
            }

            @Override
            public OptionalLong numRows() {
                return OptionalLong.empty();
            }
        };
    }

    /** The default size of a row of {@code type}'s columns but the last of {@link #schema}, the id. */
    private int width(StructType type) {
        String id = schema.fields()[schema.fields().length - 1].name();
        int width = 0;
        for (StructField field : type.fields()) {
            width += field.name().equals(id) ? 0 : field.dataType().defaultSize();
        }
        return width;
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    /**
     * Equal to a scan of the same rows: the same format, files, splits, columns (the id's name
     * among them), readers, and the same columns read and filters given. Spark compares scans so
     * when it reuses an exchange or a subquery whose plans are the same (a CTE read twice, a table
     * broadcast to two joins): two captured reads of one source then are one, as the plain reads
     * are. A reader that does not tell its equals (a configuration it holds, say) keeps the scans apart.
     */
    @Override
    public boolean equals(Object other) {
        return other instanceof FileRowsTable that && format.equals(that.format) && files == that.files
            && bytes == that.bytes && splits.equals(that.splits) && schema.equals(that.schema)
            && readers.equals(that.readers) && Objects.equals(name, that.name)
            && Objects.equals(location, that.location) && read.equals(that.read) && Arrays.equals(pushed, that.pushed);
    }

    @Override
    public int hashCode() {
        return Objects.hash(format, files, bytes, schema, read, name, location);
    }

    @Override
    public InputPartition[] planInputPartitions() {
        return splits.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return readers.of(read, pushed);
    }
}
