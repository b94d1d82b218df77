package lineage.sql.provenance;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;

/**
 * A rewritten operator: its plan (the operator's own output, then its slots' attributes), the
 * slots, and its deletion rule ("copy" while each row comes from one row of each source, "product"
 * once an inner join made it, "sum" once an aggregate, an outer or semi join, a window or a union
 * of one source with itself did).
 */
public record Carried(LogicalPlan plan, List<Slot> slots, String rule) {

    static final List<String> RULES = List.of("copy", "product", "sum");

    static String weakest(String... rules) {
        String out = "copy";
        for (String r : rules) {
            if (RULES.indexOf(r) > RULES.indexOf(out)) {
                out = r;
            }
        }
        return out;
    }

    List<Attribute> slotAttributes() {
        List<Attribute> out = new ArrayList<>();
        for (Slot s : slots) {
            out.add(s.attribute());
        }
        return out;
    }

    Slot slotOf(String source) {
        for (Slot s : slots) {
            if (s.source().equals(source)) {
                return s;
            }
        }
        return null;
    }
}
