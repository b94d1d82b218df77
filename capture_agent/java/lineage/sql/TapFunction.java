package lineage.sql;

import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * An aggregate function of a {@link Tap} (an aggregate's {@link TapGroup}, a running window's
 * {@link TapPrefix}): a long, never null, over its children (first a hash of the group or
 * partition, then one id column per source); equal to a function of the same class and tap over
 * equal children (copies are, as case classes' are).
 */
abstract class TapFunction extends DeclarativeAggregate {
    private static final long serialVersionUID = 1L;
    final Tap tap;
    private final Seq<Expression> children;

    TapFunction(Tap tap, Seq<Expression> children) {
        this.tap = tap;
        this.children = children;
    }

    static Seq<Expression> seq(Expression... items) {
        return CollectionConverters.asScala(List.of(items)).toSeq();
    }

    static Literal longLiteral(long value) {
        return Literal.create(value, DataTypes.LongType);
    }

    /** The hash child, then the id children. */
    List<Expression> all() {
        return CollectionConverters.asJava(children);
    }

    /** The tap's call over {@code group} and this function's id children ({@link Tap#call}). */
    Expression tapCall(Expression group) {
        List<Expression> all = all();
        return tap.call(group, all.subList(1, all.size()).toArray(new Expression[0]));
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public boolean nullable() {
        return false;
    }

    @Override
    public DataType dataType() {
        return DataTypes.LongType;
    }

    @Override
    public int productArity() {
        return 2;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0:
                return tap;
            case 1:
                return children;
            default:
                throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object other) {
        return other != null && other.getClass() == getClass();
    }

    @Override
    public boolean equals(Object other) {
        return canEqual(other) && ((TapFunction) other).tap == tap && ((TapFunction) other).children.equals(children);
    }

    @Override
    public int hashCode() {
        return 31 * System.identityHashCode(tap) + children.hashCode();
    }
}
