package lineage.sql.provenance;

/** A plan the rewrite cannot carry lineage through: the operator, and why. */
public final class Refused extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Refused(String operator, String why) {
        super(operator + (why == null || why.isEmpty() ? "" : ": " + why));
    }
}
