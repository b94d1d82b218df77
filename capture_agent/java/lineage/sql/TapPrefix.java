package lineage.sql;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongBinaryOperator;

import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.objects.Invoke;
import org.apache.spark.sql.types.AbstractDataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.ObjectType;

import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A window's tap where a row's lineage is the rows of its partition up to it (a running frame:
 * {@code ROWS} or {@code RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW}, a running sum, rank),
 * as a window aggregate over that frame: {@code lineage_tap_prefix(hash, ids...)}. Each row the
 * frame takes in is given the next place of its partition, a 63-bit id {@link #key}: the
 * partition's hash in the top 39 bits, the place (from 1) in the low {@link #PLACE_BITS}; the
 * tap writes the row's own ids under that id (as an aggregate's group, a combiner point); and a
 * row's value is the id of the last place its frame took in (with {@code RANGE}, its last peer's).
 * The trace reads a row's lineage as its partition's places up to that one (the {@code
 * frame_prefix} layout of the record engine): a long a row, where a set of every earlier row's ids
 * in each row made the capture quadratic in a partition's rows (TPC-DS 51's cumulative sums).
 *
 * <p>A partition of more rows than the places hold fails the task ({@link Step}): the capture fails
 * and the action runs plain, reported as not captured, never with a wrong lineage.
 *
 * <p>Children: the partition's hash, then one id column per source (as {@link Tap#call}).
 */
public final class TapPrefix extends TapFunction {
    private static final long serialVersionUID = 1L;
    /** Bits of an id that hold the row's place in its partition. */
    public static final int PLACE_BITS = 24;
    private static final long PLACES = (1L << PLACE_BITS) - 1;
    private final AttributeReference last;

    public TapPrefix(Tap tap, Seq<Expression> children) {
        super(tap, children);
        this.last = new AttributeReference("lineage_place", DataTypes.LongType, false, Metadata.empty(),
                NamedExpression.newExprId(), CollectionConverters.asScala(List.<String>of()).toSeq());
    }

    /** The id of place {@code place} (from 1) of the partition of 63-bit hash {@code hash}. */
    public static long key(long hash, long place) {
        return ((hash & ((1L << (63 - PLACE_BITS)) - 1)) << PLACE_BITS) | place;
    }

    /** The window aggregate {@code lineage_tap_prefix(hash, ids...)} over resolved expressions. */
    public static Expression function(Tap tap, Expression hash, List<Expression> ids) {
        List<Expression> all = new ArrayList<>();
        all.add(hash);
        all.addAll(ids);
        return new TapPrefix(tap, CollectionConverters.asScala(all).toSeq()).toAggregateExpression();
    }

    /**
     * {@code applyAsLong(last, hash)}: the id of the place after {@code last} (0: none yet, the
     * partition's first, of {@code hash}); a partition past {@link #PLACES} rows fails the task.
     */
    static final class Step implements LongBinaryOperator, Serializable {
        private static final long serialVersionUID = 1L;

        @Override
        public long applyAsLong(long last, long hash) {
            if (last == 0) {
                return key(hash, 1);
            }
            if ((last & PLACES) == PLACES) {
                throw new IllegalStateException("lineage: a window partition of more than " + PLACES
                        + " rows: its rows' places do not fit a running frame's tap");
            }
            return last + 1;
        }

        @Override
        public String toString() {
            return "lineage_prefix_step";
        }
    }

    private static Expression zero() {
        return longLiteral(0L);
    }

    @Override
    public TapPrefix withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new TapPrefix(tap, newChildren.toSeq());
    }

    @Override
    public String prettyName() {
        return "lineage_tap_prefix";
    }

    @Override
    public Seq<AttributeReference> aggBufferAttributes() {
        return CollectionConverters.asScala(List.of(last)).toSeq();
    }

    @Override
    public Seq<Expression> initialValues() {
        return seq(zero());
    }

    /** The next place's id (the hash computed only for a partition's first row), its row's ids
     * given to the tap under it. */
    @Override
    public Seq<Expression> updateExpressions() {
        Expression hash = new If(new EqualTo(last, zero()), all().get(0), zero());
        Literal step = new Literal(new Step(), new ObjectType(LongBinaryOperator.class));
        Expression next = new Invoke(step, "applyAsLong", DataTypes.LongType, seq(last, hash),
                CollectionConverters.asScala(List.<AbstractDataType>of()).toSeq(), false, false, true);
        return seq(tapCall(next));
    }

    /** A window's frame is never merged; the later place if it were. */
    @Override
    public Seq<Expression> mergeExpressions() {
        AttributeReference left = RichAttribute(last).left();
        AttributeReference right = RichAttribute(last).right();
        return seq(new If(new EqualTo(right, zero()), left, right));
    }

    @Override
    public Expression evaluateExpression() {
        return last;
    }
}
