package lineage.sql.provenance;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.runtime.AbstractPartialFunction;

/**
 * A source's plan whose columns carry the attributes of the leaf it stands for (the same name and
 * type, position by position), so that the rewrite needs no alias above the read. Copies of one
 * subquery (a CTE read in each branch of a UNION: TPC-DS 36) then plan alike: Spark keeps
 * the aliases of a union's first branch (the union's output is that branch's), and reuses an
 * exchange or a broadcast only between equal plans, so one branch with aliases and the others
 * without read the same table twice where plain Spark reads it once.
 */
final class LeafAttributes {
    private LeafAttributes() {
    }

    /**
     * {@code plan} (a source: its {@code columns}, then its ids) with each column that has the name
     * and type of the leaf's attribute at its place ({@code leaf}) given that attribute's id; the
     * plan as it is when it mentions a leaf's attribute already (a source over the leaf's own rows)
     * or a column is not an attribute of the plan's leaves passed up as it is.
     */
    static LogicalPlan given(LogicalPlan plan, List<Attribute> columns, List<Attribute> leaf) {
        if (columns.size() != leaf.size()) {
            return plan;
        }
        Map<ExprId, ExprId> ids = new HashMap<>();
        Set<ExprId> wanted = new HashSet<>();
        for (int i = 0; i < leaf.size(); i++) {
            Attribute column = columns.get(i);
            Attribute want = leaf.get(i);
            wanted.add(want.exprId());
            if (column instanceof AttributeReference && !column.exprId().equals(want.exprId())
                    && column.name().equals(want.name()) && column.dataType().equals(want.dataType())) {
                ids.put(column.exprId(), want.exprId());
            }
        }
        if (ids.isEmpty() || mentions(plan, wanted)) {
            return plan;
        }
        LogicalPlan given = plan.transformAllExpressions(new Renamed(ids));
        List<Attribute> out = Scala.list(given.output());
        for (int i = 0; i < columns.size(); i++) {
            ExprId expected = ids.getOrDefault(columns.get(i).exprId(), columns.get(i).exprId());
            if (!out.get(i).exprId().equals(expected)) {
                return plan;  // a column made above the read (an alias): kept as it is, under an alias
            }
        }
        return given;
    }

    private static boolean mentions(LogicalPlan plan, Set<ExprId> ids) {
        for (Attribute a : Scala.list(plan.output())) {
            if (ids.contains(a.exprId())) {
                return true;
            }
        }
        for (LogicalPlan child : Scala.list(plan.children())) {
            if (mentions(child, ids)) {
                return true;
            }
        }
        return false;
    }

    /** An attribute reference of {@code ids}' keys given its value's id. */
    private static final class Renamed extends AbstractPartialFunction<Expression, Expression> {
        private final Map<ExprId, ExprId> ids;

        Renamed(Map<ExprId, ExprId> ids) {
            this.ids = ids;
        }

        @Override
        public boolean isDefinedAt(Expression e) {
            return e instanceof AttributeReference a && ids.containsKey(a.exprId());
        }

        @Override
        public <A1 extends Expression, B1> B1 applyOrElse(A1 e, scala.Function1<A1, B1> otherwise) {
            if (!isDefinedAt(e)) {
                return otherwise.apply(e);
            }
            AttributeReference a = (AttributeReference) e;
            @SuppressWarnings("unchecked")
            B1 renamed = (B1) a.withExprId(ids.get(a.exprId()));
            return renamed;
        }
    }
}
