package lineage.agent;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.OuterReference;
import org.apache.spark.sql.catalyst.expressions.RankLike;
import org.apache.spark.sql.catalyst.expressions.RowNumberLike;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.expressions.WindowExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.CTERelationDef;
import org.apache.spark.sql.catalyst.plans.logical.CTERelationRef;
import org.apache.spark.sql.catalyst.plans.logical.Except;
import org.apache.spark.sql.catalyst.plans.logical.Expand;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Generate;
import org.apache.spark.sql.catalyst.plans.logical.Intersect;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Sort;
import org.apache.spark.sql.catalyst.plans.logical.Union;
import org.apache.spark.sql.catalyst.plans.logical.Window;
import org.apache.spark.sql.catalyst.plans.logical.WithCTE;

/**
 * The column lineage of one written query: for each written column the input columns it comes
 * from and how (OpenLineage's DIRECT IDENTITY, TRANSFORMATION or AGGREGATION, and INDIRECT
 * CONDITIONAL for the columns of a CASE/IF condition), and the input columns that only decide
 * which rows are written (INDIRECT FILTER, JOIN, GROUP_BY, SORT, WINDOW), for the dataset as a
 * whole.
 *
 * Walks the analyzed plan once, bottom up. Expression ids are unique across a plan, so one map
 * from an attribute's id to its origins serves every node, subqueries (and their outer
 * references) and CTEs included. An input column is its relation's path and the column name.
 */
public final class ColumnLineage {
    static final int IDENTITY = 0;
    static final int TRANSFORMATION = 1;
    static final int AGGREGATION = 2;
    private static final String[] DIRECT = {"IDENTITY", "TRANSFORMATION", "AGGREGATION"};
    private static final char SEP = '\u0001';
    private static final int MAX_DEPTH = 500;

    /** The origins of one attribute or expression: direct input columns (key -> strongest kind)
     * and the input columns of conditions that choose its value. */
    static final class Origins {
        final Map<String, Integer> direct = new LinkedHashMap<>();
        final Set<String> conditional = new LinkedHashSet<>();

        void addAll(Origins other, int atLeast) {
            for (Map.Entry<String, Integer> e : other.direct.entrySet()) {
                direct.merge(e.getKey(), Math.max(e.getValue(), atLeast), Math::max);
            }
            conditional.addAll(other.conditional);
        }

        Set<String> columns() {
            Set<String> all = new LinkedHashSet<>(direct.keySet());
            all.addAll(conditional);
            return all;
        }
    }

    private final Map<Long, Origins> attributes = new HashMap<>();
    private final Map<String, Set<String>> dataset = new LinkedHashMap<>();
    private final Map<Long, CTERelationDef> ctes = new HashMap<>();
    private final IdentityHashMap<LogicalPlan, Boolean> seen = new IdentityHashMap<>();

    private ColumnLineage() {
    }

    /**
     * The column lineage of a query's output columns as one JSON object of "Columns" and
     * "Dataset" (the record agent's output points: a traced row's columns name their sources),
     * or null when its plan cannot be read.
     */
    public static String ofQuery(LogicalPlan query) {
        try {
            return "{" + describe(query, null) + "}";
        } catch (Throwable t) {  // a plan shape we do not know costs the columns, never the capture
            return null;
        }
    }

    /** The "Columns" and "Dataset" JSON members for a write of {@code query} as {@code names}. */
    static String describe(LogicalPlan query, scala.collection.Seq<String> names) {
        ColumnLineage lineage = new ColumnLineage();
        lineage.visit(query, 0);
        StringBuilder json = new StringBuilder(256).append("\"Columns\":[");
        scala.collection.Iterator<Attribute> out = query.output().iterator();
        scala.collection.Iterator<String> named = names == null ? null : names.iterator();
        boolean first = true;
        while (out.hasNext()) {
            Attribute attribute = out.next();
            String name = named != null && named.hasNext() ? named.next() : attribute.name();
            Origins origins = lineage.attributes.getOrDefault(attribute.exprId().id(), new Origins());
            json.append(first ? "" : ",").append("{\"Name\":").append(SqlIo.quote(name))
                .append(",\"Inputs\":[");
            first = false;
            boolean firstInput = true;
            for (Map.Entry<String, Integer> e : origins.direct.entrySet()) {
                appendInput(json.append(firstInput ? "" : ","), e.getKey(), "DIRECT",
                    DIRECT[e.getValue()]);
                firstInput = false;
            }
            for (String key : origins.conditional) {
                appendInput(json.append(firstInput ? "" : ","), key, "INDIRECT", "CONDITIONAL");
                firstInput = false;
            }
            json.append("]}");
        }
        json.append("],\"Dataset\":[");
        first = true;
        for (Map.Entry<String, Set<String>> e : lineage.dataset.entrySet()) {
            for (String subtype : e.getValue()) {
                appendInput(json.append(first ? "" : ","), e.getKey(), "INDIRECT", subtype);
                first = false;
            }
        }
        return json.append(']').toString();
    }

    private static void appendInput(StringBuilder json, String key, String type, String subtype) {
        int cut = key.indexOf(SEP);
        json.append('[').append(SqlIo.quote(key.substring(0, cut))).append(',')
            .append(SqlIo.quote(key.substring(cut + 1))).append(',').append(SqlIo.quote(type))
            .append(',').append(SqlIo.quote(subtype)).append(']');
    }

    private void define(Attribute attribute, Origins origins) {
        attributes.put(attribute.exprId().id(), origins);
    }

    private Origins of(Attribute attribute) {
        return attributes.getOrDefault(attribute.exprId().id(), new Origins());
    }

    private void indirect(Expression expression, String subtype) {
        for (String key : origins(expression).columns()) {
            dataset.computeIfAbsent(key, k -> new LinkedHashSet<>()).add(subtype);
        }
    }

    private void visit(LogicalPlan plan, int depth) {
        if (plan == null || depth > MAX_DEPTH || seen.put(plan, Boolean.TRUE) != null) {
            return;
        }
        if (plan instanceof WithCTE) {
            WithCTE with = (WithCTE) plan;
            scala.collection.Iterator<CTERelationDef> defs = with.cteDefs().iterator();
            while (defs.hasNext()) {
                CTERelationDef def = defs.next();
                ctes.put(def.id(), def);
                visit(def.child(), depth + 1);
            }
            visit(with.plan(), depth + 1);
            return;
        }
        if (plan instanceof CTERelationRef) {
            CTERelationRef ref = (CTERelationRef) plan;
            CTERelationDef def = ctes.get(ref.cteId());
            if (def != null) {
                positional(List.of(def.child().output()), ref.output());
            }
            return;
        }
        List<String[]> reads = SqlIo.relationPaths(plan);
        if (reads != null) {
            scala.collection.Iterator<Attribute> out = plan.output().iterator();
            while (out.hasNext()) {
                Attribute attribute = out.next();
                Origins origins = new Origins();
                for (String[] read : reads) {
                    origins.direct.put(read[0] + SEP + attribute.name(), IDENTITY);
                }
                define(attribute, origins);
            }
            return;
        }
        scala.collection.Iterator<LogicalPlan> children = plan.children().iterator();
        while (children.hasNext()) {
            visit(children.next(), depth + 1);
        }
        if (plan instanceof Project) {
            defineAll(((Project) plan).projectList());
        } else if (plan instanceof Aggregate) {
            Aggregate aggregate = (Aggregate) plan;
            each(aggregate.groupingExpressions(), e -> indirect(e, "GROUP_BY"));
            defineAll(aggregate.aggregateExpressions());
        } else if (plan instanceof Filter) {
            indirect(((Filter) plan).condition(), "FILTER");
        } else if (plan instanceof Join) {
            Join join = (Join) plan;
            if (join.condition().isDefined()) {
                indirect(join.condition().get(), "JOIN");
            }
        } else if (plan instanceof Sort) {
            each(((Sort) plan).order(), e -> indirect(e, "SORT"));
        } else if (plan instanceof Window) {
            Window window = (Window) plan;
            each(window.partitionSpec(), e -> indirect(e, "WINDOW"));
            each(window.orderSpec(), e -> indirect(e, "WINDOW"));
            defineAll(window.windowExpressions());
        } else if (plan instanceof Union) {
            List<scala.collection.Seq<Attribute>> outputs = new ArrayList<>();
            scala.collection.Iterator<LogicalPlan> parts = plan.children().iterator();
            while (parts.hasNext()) {
                outputs.add(parts.next().output());
            }
            positional(outputs, plan.output());
        } else if (plan instanceof Intersect || plan instanceof Except) {
            // The right side's rows only decide which of the left side's are kept.
            each(plan.children().last().output(), e -> indirect(e, "FILTER"));
        } else if (plan instanceof Expand) {
            Expand expand = (Expand) plan;
            List<Attribute> out = new ArrayList<>();
            expand.output().foreach(a -> out.add(a));
            List<Origins> merged = new ArrayList<>();
            for (int i = 0; i < out.size(); i++) {
                merged.add(new Origins());
            }
            expand.projections().foreach(projection -> {
                int i = 0;
                scala.collection.Iterator<Expression> values = projection.iterator();
                while (values.hasNext() && i < merged.size()) {
                    merged.get(i++).addAll(origins(values.next()), IDENTITY);
                }
                return null;
            });
            for (int i = 0; i < out.size(); i++) {
                define(out.get(i), merged.get(i));
            }
        } else if (plan instanceof Generate) {
            Generate generate = (Generate) plan;
            Origins from = new Origins();
            from.addAll(origins((Expression) generate.generator()), TRANSFORMATION);
            generate.generatorOutput().foreach(a -> {
                define(a, from);
                return null;
            });
        }
    }

    /** Output i of a node is the union of output i of each of {@code sources}. */
    private void positional(List<scala.collection.Seq<Attribute>> sources,
                            scala.collection.Seq<Attribute> output) {
        List<Origins> merged = new ArrayList<>();
        for (int i = 0; i < output.size(); i++) {
            merged.add(new Origins());
        }
        for (scala.collection.Seq<Attribute> source : sources) {
            int i = 0;
            scala.collection.Iterator<Attribute> it = source.iterator();
            while (it.hasNext() && i < merged.size()) {
                merged.get(i++).addAll(of(it.next()), IDENTITY);
            }
        }
        int i = 0;
        scala.collection.Iterator<Attribute> it = output.iterator();
        while (it.hasNext()) {
            define(it.next(), merged.get(i++));
        }
    }

    private void defineAll(scala.collection.Seq<NamedExpression> expressions) {
        scala.collection.Iterator<NamedExpression> it = expressions.iterator();
        while (it.hasNext()) {
            NamedExpression named = it.next();
            Origins origins = origins((Expression) named);
            attributes.put(named.exprId().id(), origins);
        }
    }

    private static <E extends Expression> void each(scala.collection.Seq<E> expressions,
                                                   java.util.function.Consumer<Expression> action) {
        scala.collection.Iterator<E> it = expressions.iterator();
        while (it.hasNext()) {
            action.accept(it.next());
        }
    }

    /** The input columns an expression's value comes from, and how. */
    Origins origins(Expression expression) {
        Origins result = new Origins();
        if (expression instanceof Attribute) {
            result.addAll(of((Attribute) expression), IDENTITY);
        } else if (expression instanceof OuterReference) {
            result.addAll(origins((Expression) ((OuterReference) expression).e()), IDENTITY);
        } else if (expression instanceof Alias) {
            result.addAll(origins(((Alias) expression).child()), IDENTITY);
        } else if (expression instanceof AggregateExpression) {
            childrenInto(expression, result, AGGREGATION);
        } else if (expression instanceof WindowExpression) {
            Expression function = ((WindowExpression) expression).windowFunction();
            // rank() and row_number() take no column: only the window's order and partition,
            // which are the dataset's WINDOW columns.
            if (!(function instanceof RankLike || function instanceof RowNumberLike)) {
                result.addAll(origins(function), TRANSFORMATION);
            }
        } else if (expression instanceof CaseWhen) {
            CaseWhen when = (CaseWhen) expression;
            when.branches().foreach(branch -> {
                result.conditional.addAll(origins(branch._1()).columns());
                result.addAll(origins(branch._2()), TRANSFORMATION);
                return null;
            });
            if (when.elseValue().isDefined()) {
                result.addAll(origins(when.elseValue().get()), TRANSFORMATION);
            }
        } else if (expression instanceof If) {
            If choice = (If) expression;
            result.conditional.addAll(origins(choice.predicate()).columns());
            result.addAll(origins(choice.trueValue()), TRANSFORMATION);
            result.addAll(origins(choice.falseValue()), TRANSFORMATION);
        } else if (expression instanceof SubqueryExpression) {
            LogicalPlan plan = ((SubqueryExpression) expression).plan();
            visit(plan, 0);
            scala.collection.Iterator<Attribute> out = plan.output().iterator();
            while (out.hasNext()) {
                result.addAll(of(out.next()), TRANSFORMATION);
            }
            childrenInto(expression, result, TRANSFORMATION);
        } else {
            childrenInto(expression, result, TRANSFORMATION);
        }
        return result;
    }

    private void childrenInto(Expression expression, Origins result, int atLeast) {
        scala.collection.Iterator<Expression> children = expression.children().iterator();
        while (children.hasNext()) {
            result.addAll(origins(children.next()), atLeast);
        }
    }
}
