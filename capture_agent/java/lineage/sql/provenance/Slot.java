package lineage.sql.provenance;

import org.apache.spark.sql.catalyst.expressions.Attribute;

/** One source's hidden column in a rewritten plan: its ids (bigint) or id sets (binary). */
public record Slot(String source, Attribute attribute, boolean set) {

    Slot as(Attribute other, boolean isSet) {
        return new Slot(source, other, isSet);
    }
}
