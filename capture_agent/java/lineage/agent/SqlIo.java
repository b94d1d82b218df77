package lineage.agent;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;

import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.logical.CommandResult;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.V2WriteCommand;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.command.CreateDataSourceTableAsSelectCommand;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.InsertIntoHadoopFsRelationCommand;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.SaveIntoDataSourceCommand;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd;
import org.apache.spark.sql.sources.DataSourceRegister;

/**
 * Finds the datasets a finished SQL/DataFrame execution read and wrote by walking its analyzed
 * logical plan, and describes them as one "lineage.SqlIo" JSON line.
 *
 * The SQL-execution-end event carries both the execution id (which the jobs' properties name)
 * and, in memory only, its QueryExecution, so no QueryExecutionListener is needed: that one
 * reports QueryExecution.id, a different counter. Walking the plan here instead of from Python
 * saves one py4j round trip per plan node.
 */
final class SqlIo {
    private SqlIo() {
    }

    /** Returns the JSON line for a finished execution, or null when it touched no dataset. */
    static String describe(SparkListenerSQLExecutionEnd event) {
        QueryExecution qe = event.qe();
        if (qe == null) {
            return null;
        }
        List<String[]> reads = new ArrayList<>();
        List<String[]> writes = new ArrayList<>();
        walk(qe.analyzed(), reads, writes, new IdentityHashMap<>(), 0);
        // Spark 4 reports success as errorMessage = Some("").
        boolean failed = event.executionFailure().isDefined()
            || (event.errorMessage().isDefined() && !event.errorMessage().get().isEmpty());
        if (failed) {
            // A failed write may have left nothing (or a partial output): only the reads are facts.
            writes.clear();
        }
        if (reads.isEmpty() && writes.isEmpty()) {
            return null;
        }
        StringBuilder json = new StringBuilder(256);
        json.append("{\"Event\":\"lineage.SqlIo\",\"Execution ID\":").append(event.executionId())
            .append(",\"Time\":").append(event.time())
            .append(",\"Failed\":").append(failed)
            .append(",\"Reads\":");
        appendPaths(json, reads);
        json.append(",\"Writes\":");
        appendPaths(json, writes);
        json.append('}');
        return json.toString();
    }

    private static void walk(LogicalPlan plan, List<String[]> reads, List<String[]> writes,
                      IdentityHashMap<LogicalPlan, Boolean> seen, int depth) {
        if (plan == null || depth > 500 || seen.put(plan, Boolean.TRUE) != null) {
            return;
        }
        List<String[]> relation = relationPaths(plan);
        if (relation != null) {
            reads.addAll(relation);
        } else if (plan instanceof InsertIntoHadoopFsRelationCommand) {
            InsertIntoHadoopFsRelationCommand cmd = (InsertIntoHadoopFsRelationCommand) plan;
            writes.add(new String[] {cmd.outputPath().toString(), formatName(cmd.fileFormat()),
                columns(cmd.query(), cmd.outputColumnNames())});
        } else if (plan instanceof SaveIntoDataSourceCommand) {
            SaveIntoDataSourceCommand cmd = (SaveIntoDataSourceCommand) plan;
            scala.Option<String> path = cmd.options().get("path");
            String format = cmd.dataSource() instanceof DataSourceRegister
                ? ((DataSourceRegister) cmd.dataSource()).shortName() : "datasource";
            if (path.isDefined()) {
                writes.add(new String[] {path.get(), format, columns(cmd.query(), null)});
            }
        } else if (plan instanceof CreateDataSourceTableAsSelectCommand) {
            CreateDataSourceTableAsSelectCommand cmd = (CreateDataSourceTableAsSelectCommand) plan;
            writes.add(new String[] {tableName(cmd.table()), "table",
                columns(cmd.query(), cmd.outputColumnNames())});
        } else if (plan instanceof V2WriteCommand) {
            V2WriteCommand cmd = (V2WriteCommand) plan;
            writes.add(new String[] {cmd.table().name(), "table", columns(cmd.query(), null)});
        } else if (plan instanceof CommandResult) {
            walk(((CommandResult) plan).commandLogicalPlan(), reads, writes, seen, depth + 1);
        }
        scala.collection.Iterator<LogicalPlan> children = plan.children().iterator();
        while (children.hasNext()) {
            walk(children.next(), reads, writes, seen, depth + 1);
        }
        // the datasets a subquery reads (IN, EXISTS, scalar) are the query's reads too
        scala.collection.Iterator<Expression> expressions = plan.expressions().iterator();
        while (expressions.hasNext()) {
            walkSubqueries(expressions.next(), reads, writes, seen, depth + 1);
        }
    }

    private static void walkSubqueries(Expression expression, List<String[]> reads,
                                       List<String[]> writes,
                                       IdentityHashMap<LogicalPlan, Boolean> seen, int depth) {
        if (depth > 500) {
            return;
        }
        if (expression instanceof SubqueryExpression) {
            walk(((SubqueryExpression) expression).plan(), reads, writes, seen, depth + 1);
        }
        scala.collection.Iterator<Expression> children = expression.children().iterator();
        while (children.hasNext()) {
            walkSubqueries(children.next(), reads, writes, seen, depth + 1);
        }
    }

    /**
     * The paths (or table names) and formats a relation reads, or null when the node is no
     * relation of a dataset.
     */
    static List<String[]> relationPaths(LogicalPlan plan) {
        List<String[]> paths = new ArrayList<>();
        if (plan instanceof LogicalRelation) {
            LogicalRelation rel = (LogicalRelation) plan;
            if (rel.relation() instanceof HadoopFsRelation) {
                HadoopFsRelation fs = (HadoopFsRelation) rel.relation();
                String format = formatName(fs.fileFormat());
                scala.collection.Iterator<Path> it = fs.location().rootPaths().iterator();
                while (it.hasNext()) {
                    paths.add(new String[] {it.next().toString(), format});
                }
            } else if (rel.catalogTable().isDefined()) {
                paths.add(new String[] {tableName(rel.catalogTable().get()), "table"});
            }
            return paths;
        }
        if (plan instanceof DataSourceV2Relation) {
            Table table = ((DataSourceV2Relation) plan).table();
            String location = table.properties().get(TableCatalog.PROP_LOCATION);
            if (location == null) {
                paths.add(new String[] {table.name(), "table"});
            } else {  // the folders of a table of files (the record agent's ORC reads: several, by commas)
                String provider = table.properties().getOrDefault(TableCatalog.PROP_PROVIDER, "table");
                for (String folder : location.split(",")) {
                    paths.add(new String[] {folder, provider});
                }
            }
            return paths;
        }
        return null;
    }

    /** The column lineage JSON members of a write of {@code query}, or null when it cannot be told. */
    private static String columns(LogicalPlan query, scala.collection.Seq<String> names) {
        try {
            return ColumnLineage.describe(query, names);
        } catch (Throwable t) {  // a plan shape we do not know costs the columns, never the datasets
            return null;
        }
    }

    private static String tableName(CatalogTable table) {
        return table.identifier().unquotedString();
    }

    private static String formatName(FileFormat format) {
        if (format instanceof DataSourceRegister) {
            return ((DataSourceRegister) format).shortName();
        }
        return format.getClass().getSimpleName().replace("FileFormat", "").toLowerCase();
    }

    private static void appendPaths(StringBuilder json, List<String[]> items) {
        json.append('[');
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                json.append(',');
            }
            json.append("{\"Path\":").append(quote(items.get(i)[0]))
                .append(",\"Format\":").append(quote(items.get(i)[1]));
            if (items.get(i).length > 2 && items.get(i)[2] != null) {
                json.append(',').append(items.get(i)[2]);
            }
            json.append('}');
        }
        json.append(']');
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
