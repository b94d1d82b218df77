package lineage.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;


import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BitwiseAnd;
import org.apache.spark.sql.catalyst.expressions.BitwiseOr;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.XxHash64;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A captured aggregate's tap as one of the aggregate's own functions: {@code lineage_tap(hash,
 * ids...)} is the group's 63-bit hash ({@code hash}, an expression of the group columns), and each
 * row it aggregates passes its ids to the {@link Tap}, which remembers them under that hash. The
 * hash is in the aggregation buffer: a row of a group whose buffer has it already does not compute
 * it again (Catalyst's {@link If} evaluates only the branch it takes), so a task computes it about
 * once a group rather than once a row, and the aggregate carries no other column for it. Partial
 * buffers merge by taking the hash either has; the result is the hash. A hash of 0 (one chance in
 * 2^63) is computed again for each row of its group, with the same result.
 *
 * <p>Children: the hash, then one id column per source (1 to {@link Tap#MAX_SOURCES}, as {@link Tap#call}).
 */
public final class TapGroup extends TapFunction {
    private static final long serialVersionUID = 1L;
    private final AttributeReference group;

    public TapGroup(Tap tap, Seq<Expression> children) {
        super(tap, children);
        this.group = new AttributeReference("lineage_group", DataTypes.LongType, false, Metadata.empty(),
                NamedExpression.newExprId(), CollectionConverters.asScala(List.<String>of()).toSeq());
    }

    /**
     * A group's id: the 63-bit xxhash64 of its key expressions (0 for none), of the types and
     * nullability of {@code fields}. Spark's hash skips null values, so (null, x) and (x, null)
     * would hash the same: with two nullable keys or more, a mask of which keys are null is hashed
     * too (a long per 62 keys); a struct or array key is hashed as its JSON text ({@code toJson}
     * makes it; nulls inside it hold their place there).
     */
    public static Expression groupHash(List<Expression> keys, StructField[] fields, UnaryOperator<Expression> toJson) {
        if (keys.isEmpty()) {
            return longLiteral(0L);
        }
        List<Expression> hashed = new ArrayList<>();
        List<Expression> nullable = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            DataType type = fields[i].dataType();
            Expression key = type instanceof ArrayType || type instanceof StructType ? toJson.apply(keys.get(i)) : keys.get(i);
            hashed.add(key);
            if (fields[i].nullable()) {
                nullable.add(key);
            }
        }
        if (nullable.size() > 1) {
            for (int start = 0; start < nullable.size(); start += 62) {
                Expression mask = longLiteral(0L);
                for (int bit = 0; bit < 62 && start + bit < nullable.size(); bit++) {
                    Expression isNull = new IsNull(nullable.get(start + bit));
                    mask = new BitwiseOr(mask, new If(isNull, longLiteral(1L << bit), longLiteral(0L)));
                }
                hashed.add(mask);
            }
        }
        return new BitwiseAnd(new XxHash64(CollectionConverters.asScala(hashed).toSeq(), 42L), longLiteral(Long.MAX_VALUE));
    }

    /** The aggregate function {@code lineage_tap(hash, ids...)} over resolved expressions. */
    public static Expression function(Tap tap, Expression hash, List<Expression> ids) {
        List<Expression> all = new ArrayList<>();
        all.add(hash);
        all.addAll(ids);
        return new TapGroup(tap, CollectionConverters.asScala(all).toSeq()).toAggregateExpression();
    }

    @Override
    public TapGroup withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new TapGroup(tap, newChildren.toSeq());
    }

    @Override
    public String prettyName() {
        return "lineage_tap";
    }

    @Override
    public Seq<AttributeReference> aggBufferAttributes() {
        return CollectionConverters.asScala(List.of(group)).toSeq();
    }

    @Override
    public Seq<Expression> initialValues() {
        return seq(Literal.create(0L, DataTypes.LongType));
    }

    @Override
    public Seq<Expression> updateExpressions() {
        Expression hash = new If(new EqualTo(group, longLiteral(0L)), all().get(0), group);
        return seq(tapCall(hash));
    }

    @Override
    public Seq<Expression> mergeExpressions() {
        AttributeReference left = RichAttribute(group).left();
        AttributeReference right = RichAttribute(group).right();
        return seq(new If(new EqualTo(left, Literal.create(0L, DataTypes.LongType)), right, left));
    }

    @Override
    public Expression evaluateExpression() {
        return group;
    }
}
