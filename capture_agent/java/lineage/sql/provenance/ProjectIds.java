package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;

/** A projection keeps its row's hidden columns. */
final class ProjectIds implements OperatorRewrite {

    @Override
    public boolean takesLists() {
        return true;
    }

    @Override
    public boolean accepts(LogicalPlan node) {
        return node instanceof Project;
    }

    @Override
    public Carried rewrite(LogicalPlan node, List<Carried> children, Rewriter rewriter) {
        Carried child = children.get(0);
        List<NamedExpression> list = new ArrayList<>(Scala.list(((Project) node).projectList()));
        list.addAll(child.slotAttributes());
        return new Carried(new Project(Scala.seq(list), child.plan()), child.slots(), child.rule());
    }
}
