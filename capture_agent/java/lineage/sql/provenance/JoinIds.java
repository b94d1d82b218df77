package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.CreateArray;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.Cross$;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;

/**
 * Inner, cross and outer joins: a row holds both sides' hidden columns (an outer join's missing
 * side: none); a source read on both sides becomes one column: the list of the two sides' ids
 * when both hold ids ({@link Slot#list}), else the union of the two as a set. A left
 * anti join's row is its left row: it keeps the left side's.
 */
final class JoinIds implements OperatorRewrite {

    @Override
    public boolean takesLists() {
        return true;
    }
    private static final Set<JoinType> BOTH = Set.of(Inner$.MODULE$, Cross$.MODULE$, LeftOuter$.MODULE$,
            RightOuter$.MODULE$, FullOuter$.MODULE$);

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Join join && (BOTH.contains(join.joinType()) || join.joinType() == LeftAnti$.MODULE$);
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Join join = (Join) node;
        Carried left = children.get(0);
        Carried right = children.get(1);
        Join plan = new Join(left.plan(), right.plan(), join.joinType(), join.condition(),
                Broadcasts.hint(join, left.slots().stream().anyMatch(Slot::set),
                        right.slots().stream().anyMatch(Slot::set)));
        if (join.joinType() == LeftAnti$.MODULE$) {
            return new Carried(plan, left.slots(), left.rule());
        }
        boolean inner = join.joinType() == Inner$.MODULE$ || join.joinType() == Cross$.MODULE$;
        return merged(plan, left, right.slots(), rewriter, inner ? "product" : "sum");
    }

    /**
     * {@code plan} (left's rows beside another side's, whose slots are {@code others}) with each
     * source of both sides as one set column, the union of the two.
     */
    static Carried merged(LogicalPlan plan, Carried left, List<Slot> others, Rewriter rewriter, String rule) {
        Map<String, List<Slot>> bySource = new LinkedHashMap<>();
        for (Slot s : left.slots()) {
            bySource.computeIfAbsent(s.source(), k -> new ArrayList<>()).add(s);
        }
        for (Slot s : others) {
            bySource.computeIfAbsent(s.source(), k -> new ArrayList<>()).add(s);
        }
        List<Slot> slots = new ArrayList<>();
        Set<ExprId> dropped = new HashSet<>();
        List<NamedExpression> merges = new ArrayList<>();
        for (List<Slot> same : bySource.values()) {
            if (same.size() == 1) {
                slots.add(same.get(0));
                continue;
            }
            for (Slot s : same) {
                dropped.add(s.attribute().exprId());
            }
            boolean ids = same.stream().noneMatch(s -> s.set() || s.list());
            Expression merge;
            if (ids) {  // a list of the sides' ids: no set made for each row (taps add each)
                List<Expression> each = new ArrayList<>();
                for (Slot s : same) {
                    each.add(s.attribute());
                }
                merge = new CreateArray(Scala.seq(each), false);
            } else {
                merge = rewriter.asSet(same.get(0));
                for (Slot s : same.subList(1, same.size())) {
                    merge = rewriter.or(merge, rewriter.asSet(s));
                }
            }
            Alias all = rewriter.alias(merge, rewriter.fresh());
            merges.add(all);
            slots.add(new Slot(same.get(0).source(), all.toAttribute(), !ids, ids));
        }
        if (merges.isEmpty()) {
            return new Carried(plan, slots, Carried.weakest(left.rule(), rule));
        }
        List<NamedExpression> list = new ArrayList<>();
        for (Attribute a : Scala.list(plan.output())) {
            if (!dropped.contains(a.exprId())) {
                list.add(a);
            }
        }
        list.addAll(merges);
        return new Carried(new Project(Scala.seq(list), plan), slots, "sum");
    }
}
