package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.catalyst.plans.logical.Union;
import org.apache.spark.sql.types.DataTypes;

/** A union's row keeps its side's hidden columns, aligned by source: one column per source any
 * side reads (none where its side does not; sets where any side's are). */
final class UnionIds implements OperatorRewrite {

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Union union && !union.byName() && !union.allowMissingCol();
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Map<String, Boolean> sources = new LinkedHashMap<>();
        String rule = "copy";
        for (Carried child : children) {
            for (Slot s : child.slots()) {
                sources.merge(s.source(), s.set(), Boolean::logicalOr);
            }
            rule = Carried.weakest(rule, child.rule());
        }
        Map<String, String> names = new LinkedHashMap<>();
        for (String source : sources.keySet()) {
            names.put(source, rewriter.fresh());
        }
        List<LogicalPlan> plans = new ArrayList<>();
        List<Slot> slots = new ArrayList<>();
        List<LogicalPlan> originals = Scala.list(node.children());
        for (int c = 0; c < children.size(); c++) {
            Carried child = children.get(c);
            List<NamedExpression> list = new ArrayList<>(Scala.list(originals.get(c).output()));
            for (Map.Entry<String, Boolean> source : sources.entrySet()) {
                Slot mine = child.slotOf(source.getKey());
                boolean set = source.getValue();
                Expression value = mine == null
                        ? Literal.create(null, set ? DataTypes.BinaryType : DataTypes.LongType)
                        : set ? rewriter.asSet(mine) : mine.attribute();
                Alias aligned = rewriter.alias(value, names.get(source.getKey()));
                list.add(aligned);
                if (c == 0) {
                    slots.add(new Slot(source.getKey(), aligned.toAttribute(), set));
                }
            }
            plans.add(new Project(Scala.seq(list), child.plan()));
        }
        Union union = (Union) node;
        LogicalPlan plan = new Union(Scala.seq(plans), union.byName(), union.allowMissingCol());
        List<Attribute> output = Scala.list(plan.output());
        List<Slot> out = new ArrayList<>();  // the union's own attributes (nullability merged)
        for (Slot s : slots) {
            for (Attribute a : output) {
                if (a.exprId().equals(s.attribute().exprId())) {
                    out.add(s.as(a, s.set()));
                }
            }
        }
        return new Carried(plan, out, rule);
    }
}
