package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.plans.logical.Expand;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import scala.collection.immutable.Seq;

/** An expand (GROUPING SETS, ROLLUP, CUBE; several distinct aggregates) makes several rows of each
 * row: each keeps the row's hidden columns. */
final class ExpandIds implements OperatorRewrite {

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Expand;
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Expand expand = (Expand) node;
        Carried child = children.get(0);
        List<Seq<Expression>> projections = new ArrayList<>();
        for (Seq<Expression> projection : Scala.list(expand.projections())) {
            List<Expression> list = new ArrayList<>(Scala.list(projection));
            list.addAll(child.slotAttributes());
            projections.add(Scala.seq(list));
        }
        List<Attribute> output = new ArrayList<>(Scala.list(expand.output()));
        List<Slot> slots = new ArrayList<>();
        for (Slot slot : child.slots()) {
            Attribute fresh = slot.attribute().newInstance();
            output.add(fresh);
            slots.add(slot.as(fresh, slot.set()));
        }
        return new Carried(new Expand(Scala.seq(projections), Scala.seq(output), child.plan()), slots, child.rule());
    }
}
