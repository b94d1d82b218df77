package lineage.sql;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.ExperimentalMethods;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.CreateNamedStruct;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GetStructField;
import org.apache.spark.sql.catalyst.expressions.KnownNotNull;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.FilterExec;
import org.apache.spark.sql.execution.ProjectExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.execution.datasources.FileSourceStrategy;

import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractPartialFunction;

/**
 * A planning strategy that reads a file scan's {@code _metadata} fields flat. Spark's own {@link
 * FileSourceStrategy} wraps the scan's metadata columns (file size, row index...) in a struct, a
 * Project of {@code named_struct(...)} above the scan, and the query reads the fields back out of
 * it: a captured source's id ({@code _metadata.file_size}, {@code _metadata.row_index}) built a
 * row object of boxed longs for every row. This strategy plans the scan as Spark does and, where the
 * plan above the scan uses the struct only through its fields, reads those fields from the scan's
 * own columns and drops the struct's Project; any other plan (the struct used whole, or a shape it
 * does not know, or a failure of its own) is left to Spark's strategy, as it is. Results are the
 * same either way: the struct's fields are the scan's columns. Installed in the session's
 * experimental strategies, it plans the session's plain queries too, which lose nothing by it.
 */
public final class FlatMetadata extends SparkStrategy {
    /** Puts this strategy first among {@code spark}'s extra strategies, unless one is there. */
    public void install(SparkSession spark) {
        ExperimentalMethods methods = spark.experimental();
        Seq<SparkStrategy> present = methods.extraStrategies();
        if (present.exists(s -> s.getClass().getName().equals(FlatMetadata.class.getName()))) {
            return;
        }
        List<SparkStrategy> all = new ArrayList<>();
        all.add(this);
        all.addAll(CollectionConverters.asJava(present));
        methods.extraStrategies_$eq(CollectionConverters.asScala(all).toList());
    }

    @Override
    public Seq<SparkPlan> apply(LogicalPlan plan) {
        Seq<SparkPlan> planned = FileSourceStrategy.apply(plan);
        if (planned.size() != 1) {
            return emptySeq();
        }
        SparkPlan flat;
        try {
            flat = flattened(planned.head());
        } catch (RuntimeException | LinkageError e) {  // never the query's failure: Spark's plan instead
            flat = null;
        }
        return flat == null ? emptySeq() : CollectionConverters.asScala(List.of(flat)).toList();
    }

    /** {@code top} without the metadata struct's Project, or null where that cannot be done. */
    static SparkPlan flattened(SparkPlan top) {
        List<SparkPlan> chain = new ArrayList<>();  // the Filters and Projects above the struct
        SparkPlan node = top;
        while (!(node instanceof ProjectExec && ((ProjectExec) node).child() instanceof FileSourceScanExec)) {
            if (!(node instanceof ProjectExec || node instanceof FilterExec)) {
                return null;
            }
            chain.add(node);
            node = node.children().head();
        }
        ProjectExec struct = (ProjectExec) node;
        FileSourceScanExec scan = (FileSourceScanExec) struct.child();
        NamedExpression last = struct.projectList().last();
        if (chain.isEmpty() || !(last instanceof Alias)) {
            return null;
        }
        Expression made = ((Alias) last).child();
        if (made instanceof KnownNotNull) {
            made = ((KnownNotNull) made).child();
        }
        if (!(made instanceof CreateNamedStruct)) {
            return null;
        }
        ExprId metadata = last.exprId();
        List<Expression> fields = CollectionConverters.asJava(((CreateNamedStruct) made).valExprs());
        for (Expression field : fields) {
            if (!(field instanceof Attribute)) {
                return null;
            }
        }
        Fields read = new Fields(metadata, fields);
        SparkPlan rebuilt = scan;
        for (int i = chain.size() - 1; i >= 0; i--) {
            SparkPlan above = chain.get(i).withNewChildren(CollectionConverters.asScala(List.of(rebuilt)).toSeq());
            rebuilt = (SparkPlan) above.transformExpressions(read);
            if (rebuilt.references().exists(a -> a.exprId().equals(metadata))) {
                return null;  // the struct used whole
            }
        }
        if (!rebuilt.output().equals(top.output())) {
            return null;
        }
        return rebuilt;
    }

    private static Seq<SparkPlan> emptySeq() {
        return CollectionConverters.asScala(List.<SparkPlan>of()).toList();
    }

    /** {@code _metadata.<field>} as the scan's column of that field. */
    private static final class Fields extends AbstractPartialFunction<Expression, Expression> {
        private final ExprId metadata;
        private final List<Expression> fields;

        Fields(ExprId metadata, List<Expression> fields) {
            this.metadata = metadata;
            this.fields = fields;
        }

        @Override
        public boolean isDefinedAt(Expression e) {
            if (e instanceof GetStructField) {
                Expression child = ((GetStructField) e).child();
                return child instanceof Attribute && ((Attribute) child).exprId().equals(metadata);
            }
            return false;
        }

        @Override
        public <A1 extends Expression, B1> B1 applyOrElse(A1 e, scala.Function1<A1, B1> otherwise) {
            if (!isDefinedAt(e)) {
                return otherwise.apply(e);
            }
            @SuppressWarnings("unchecked")
            B1 field = (B1) fields.get(((GetStructField) e).ordinal());
            return field;
        }
    }
}
