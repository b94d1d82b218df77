package lineage.sql.provenance;

import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.types.ArrayType;

/**
 * One source's hidden column in a rewritten plan: its ids (bigint), id sets (binary), or a list
 * of ids (array&lt;bigint&gt;, {@link #list}: a join of a source with itself, each row of the
 * source's on both sides, as TPC-DS 95's; taps add each, other rewrites take it as a set).
 */
public record Slot(String source, Attribute attribute, boolean set) {

    Slot as(Attribute other, boolean isSet) {
        return new Slot(source, other, isSet);
    }

    /** Whether the column holds a short list of ids (an array, nulls none) rather than one or a set. */
    boolean list() {
        return attribute.dataType() instanceof ArrayType;
    }
}
