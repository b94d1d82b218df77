package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;

/** Walks of expression trees. */
final class Expressions {
    private Expressions() {
    }

    /** A subquery {@code e} holds that the rewrite does not carry (dynamic pruning is dropped:
     * it only skips files), named; else null. */
    static String subquery(Expression e) {
        String kind = e.getClass().getSimpleName();
        if (kind.startsWith("DynamicPruning")) {
            return null;
        }
        if (e instanceof org.apache.spark.sql.catalyst.expressions.ScalarSubquery sq && sq.outerAttrs().isEmpty()) {
            return null;  // its plan is rewritten too (SubqueryIds)
        }
        if (e instanceof SubqueryExpression) {
            return "a " + kind + " (subquery) in an expression";
        }
        for (Expression child : Scala.list(e.children())) {
            String found = subquery(child);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /** The first expression in {@code e}'s tree of one of the given classes (by simple name), or null. */
    static Expression find(Expression e, String... kinds) {
        if (java.util.Arrays.asList(kinds).contains(e.getClass().getSimpleName())) {
            return e;
        }
        for (Expression child : Scala.list(e.children())) {
            Expression found = find(child, kinds);
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    /** The expressions in {@code e}'s tree of the given class (by simple name), not those inside
     * them, added to {@code out}. */
    static List<Expression> all(Expression e, String kind, List<Expression> out) {
        if (e.getClass().getSimpleName().equals(kind)) {
            out.add(e);
            return out;
        }
        for (Expression child : Scala.list(e.children())) {
            all(child, kind, out);
        }
        return out;
    }

    /** The parts of a condition joined by AND. */
    static List<Expression> conjuncts(Expression e) {
        List<Expression> out = new ArrayList<>();
        if (e instanceof And and) {
            out.addAll(conjuncts(and.left()));
            out.addAll(conjuncts(and.right()));
        } else {
            out.add(e);
        }
        return out;
    }

    /** {@code e} with each attribute of {@code values} (by id) replaced by its expression. */
    static Expression replaced(Expression e, java.util.Map<org.apache.spark.sql.catalyst.expressions.ExprId, Expression> values) {
        if (e instanceof org.apache.spark.sql.catalyst.expressions.Attribute a && values.containsKey(a.exprId())) {
            return values.get(a.exprId());
        }
        List<Expression> rebuilt = new ArrayList<>();
        boolean changed = false;
        for (Expression child : Scala.list(e.children())) {
            Expression r = replaced(child, values);
            changed |= r != child;
            rebuilt.add(r);
        }
        return changed ? e.withNewChildren(Scala.seq(rebuilt)) : e;
    }

    static boolean isDynamicPruning(Expression e) {
        return e.getClass().getSimpleName().startsWith("DynamicPruning");
    }
}
