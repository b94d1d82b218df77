package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.columnar.InMemoryRelation;
import scala.Option;

/**
 * A cached DataFrame's rows (an {@code InMemoryRelation} in the optimized plan: {@code df.cache()},
 * {@code persist}, {@code CACHE TABLE}) as the query that made them: the cache's analyzed plan,
 * optimized, under a projection that gives its columns the relation's attribute ids. The cache
 * holds no ids, so a captured query reads the cached frame's sources again; a job's plain queries
 * use the cache as before. A cached query that is not deterministic (a random column) would not
 * give the same rows again: it is left to the refusal.
 */
final class CachedPlans {
    private CachedPlans() {
    }

    /** {@code plan} with every cache it reads replaced by the query that filled it. */
    static LogicalPlan expand(SparkSession session, LogicalPlan plan) {
        if (plan instanceof InMemoryRelation cached && cached.cacheBuilder().logicalPlan().deterministic()) {
            LogicalPlan query = expand(session, session.sessionState().optimizer().execute(cached.cacheBuilder().logicalPlan()));
            List<Attribute> from = Scala.list(query.output());
            List<Attribute> to = Scala.list(cached.output());
            List<NamedExpression> list = new ArrayList<>();
            for (int i = 0; i < to.size(); i++) {
                list.add(new Alias(from.get(i), to.get(i).name(), to.get(i).exprId(), to.get(i).qualifier(),
                        Option.empty(), Scala.seq(List.of())));
            }
            return new Project(Scala.seq(list), query);
        }
        List<LogicalPlan> children = Scala.list(plan.children());
        List<LogicalPlan> expanded = new ArrayList<>();
        boolean changed = false;
        for (LogicalPlan child : children) {
            LogicalPlan e = expand(session, child);
            expanded.add(e);
            changed |= e != child;
        }
        return changed ? plan.withNewChildren(Scala.seq(expanded)) : plan;
    }
}
