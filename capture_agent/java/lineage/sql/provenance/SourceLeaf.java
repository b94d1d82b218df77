package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.Metadata;
import scala.Option;

/**
 * A leaf whose rows the agent reads with their ids (files of Parquet, ORC, CSV, JSON Lines and
 * text; local rows, an RDD's rows and ranges, written once to Parquet): the source the Python side
 * made of it (its columns, then its ids), its columns given the leaf's own attributes.
 */
final class SourceLeaf implements OperatorRewrite {
    static final Set<String> FORMATS = Set.of("parquet", "orc", "csv", "json", "text");
    static final Set<String> LOCAL = Set.of("LocalRelation", "LogicalRDD", "Range");

    static boolean isReadable(LogicalPlan node) {
        if (!node.children().isEmpty() || NoRowsLeaf.isNoRows(node)) {
            return false;
        }
        return LOCAL.contains(node.getClass().getSimpleName()) || format(node) != null || LeafIdentity.isTable(node);
    }

    /** The short name of a file relation's format, when the agent reads it; else null. */
    static String format(LogicalPlan node) {
        if (node instanceof LogicalRelation lr && lr.relation() instanceof HadoopFsRelation fs
                && fs.fileFormat() instanceof DataSourceRegister named
                && FORMATS.contains(named.shortName())) {
            return named.shortName();
        }
        return null;
    }

    /** What the Python side needs to read the leaf: kind (a format, or local), its root paths (by
     * newlines), its catalog table, its reader options (option.NAME), and what it reads (schema:
     * the leaf's schema as JSON; files: the files it lists, by newlines), which name a source read
     * again by a later leaf. */
    static Map<String, String> describe(LogicalPlan node) {
        Map<String, String> out = new HashMap<>();
        String fmt = format(node);
        out.put("kind", fmt != null ? fmt : LeafIdentity.isTable(node) ? "table" : "local");
        out.put("node", node.getClass().getSimpleName());
        String identity = LeafIdentity.of(node);
        if (identity != null) {
            out.put("identity", identity);
        }
        if (fmt != null) {
            LogicalRelation lr = (LogicalRelation) node;
            HadoopFsRelation fs = (HadoopFsRelation) lr.relation();
            List<String> paths = new ArrayList<>();
            for (Path p : Scala.list(fs.location().rootPaths())) {
                paths.add(p.toString());
            }
            out.put("paths", String.join("\n", paths));
            out.put("schema", node.schema().json());
            String[] files = fs.location().inputFiles();
            java.util.Arrays.sort(files);
            out.put("files", String.join("\n", files));
            if (lr.catalogTable().isDefined()) {
                out.put("table", lr.catalogTable().get().identifier().unquotedString());
            }
            scala.collection.Iterator<scala.Tuple2<String, String>> it = fs.options().iterator();
            while (it.hasNext()) {
                scala.Tuple2<String, String> kv = it.next();
                out.put("option." + kv._1(), kv._2());
            }
        }
        return out;
    }

    @Override
    public boolean accepts(LogicalPlan node) {
        return isReadable(node);
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Rewriter.Source source = rewriter.sourceOf(node);
        if (source == null) {
            throw new Refused(node.nodeName(), "no source was made of it");
        }
        Read read = Read.of(source.plan(), source.idColumn());
        if (read.id() == null) {
            throw new Refused(node.nodeName(), "its source has no ids");
        }
        List<Attribute> leaf = Scala.list(node.output());
        LogicalPlan plan = LeafAttributes.given(source.plan(), read.columns(), leaf);
        if (plan != source.plan()) {
            read = Read.of(plan, source.idColumn());
        }
        List<Attribute> columns = read.columns();
        Attribute id = read.id();
        List<Expression> values = columns.size() == leaf.size() ? new ArrayList<>(columns)
            : matched(node, leaf, columns, id, rewriter);
        String zone = rewriter.session.sessionState().conf().sessionLocalTimeZone();
        List<NamedExpression> list = new ArrayList<>();
        for (int i = 0; i < leaf.size(); i++) {
            Attribute want = leaf.get(i);
            Expression value = values.get(i);
            if (value instanceof Attribute same && same.exprId().equals(want.exprId())
                    && same.dataType().equals(want.dataType())) {
                list.add(same);  // a view's leaf: the source's own column
                continue;
            }
            if (!value.dataType().equals(want.dataType())) {
                value = new Cast(value, want.dataType(), Option.apply(zone));
            }
            list.add(new Alias(value, want.name(), want.exprId(), want.qualifier(), Option.<Metadata>empty(),
                    Scala.seq(List.of())));
        }
        Alias ids = rewriter.alias(id, rewriter.fresh());
        list.add(ids);
        Slot slot = new Slot(source.id(), ids.toAttribute(), false);
        return new Carried(new Project(Scala.seq(list), plan), List.of(slot), "copy");
    }

    /** A source plan's output: its columns, and its ids (the column named {@code idColumn}; null if none). */
    private record Read(List<Attribute> columns, Attribute id) {
        static Read of(LogicalPlan plan, String idColumn) {
            Attribute id = null;
            List<Attribute> columns = new ArrayList<>();
            for (Attribute a : Scala.list(plan.output())) {
                if (a.name().equals(idColumn)) {
                    id = a;
                } else {
                    columns.add(a);
                }
            }
            return new Read(columns, id);
        }
    }

    /**
     * The source's column for each of the leaf's attributes, where the leaf reads a captured
     * source's rows (a view of a captured DataFrame) and so has other columns than the source's
     * plan gives: the column of the same expression id, else of the same name; an attribute the
     * query never reads (the raw id of the agent's reader of lines, under its source's renamed
     * one) is a null of its type; the id column of the agent's table ({@code <id>_row}), which the
     * plan of a cached captured frame reads, is the source's id.
     */
    private static List<Expression> matched(LogicalPlan node, List<Attribute> leaf, List<Attribute> columns,
            Attribute id, Rewriter rewriter) {
        List<Expression> out = new ArrayList<>();
        for (Attribute want : leaf) {
            Attribute found = null;
            for (Attribute a : columns) {
                if (a.exprId().equals(want.exprId())) {
                    found = a;
                }
            }
            for (Attribute a : columns) {
                if (found == null && a.name().equals(want.name())) {
                    found = a;
                }
            }
            if (found == null && want.name().equals(id.name() + "_row")) {
                found = id;  // the agent's table's own id column, under the name of the source's (a cached frame's plan reads it)
            }
            if (found != null) {
                out.add(found);
            } else if (!rewriter.reads(want)) {
                out.add(Literal.create(null, want.dataType()));
            } else {
                throw new Refused(node.nodeName(), "its source has no column " + want.name());
            }
        }
        return out;
    }
}
