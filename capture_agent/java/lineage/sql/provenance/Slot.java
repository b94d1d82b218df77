package lineage.sql.provenance;

import org.apache.spark.sql.catalyst.expressions.Attribute;

/**
 * One source's hidden column in a rewritten plan: its ids (bigint), id sets (binary), or a list
 * of ids (array&lt;bigint&gt;, {@link #list}: a join of a source with itself, each row of the
 * source's on both sides, as TPC-DS 95's; taps add each, other rewrites take it as a set).
 */
public record Slot(String source, Attribute attribute, boolean set, boolean list) {

    /** A column of ids or of id sets (not a list). */
    public Slot(String source, Attribute attribute, boolean set) {
        this(source, attribute, set, false);
    }

    /** The same source in another column, of ids or of sets (a list is made only by a join). The
     * column's form is kept here, not read from its type: a column computed by one of our functions
     * is not resolved until the rewritten plan is analyzed. */
    Slot as(Attribute other, boolean isSet) {
        return new Slot(source, other, isSet);
    }
}
