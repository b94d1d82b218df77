package lineage.sql;

import java.util.Base64;

import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * What-if replays of captured DataFrames: {@code lineage_keep(deleted, id)} is false for the ids
 * in {@code deleted} (base64 of a Roaring bitmap in the portable 64-bit format, pyroaring's
 * BitMap64), true for every other. A replay puts {@code WHERE lineage_keep('...', id)} above
 * each source the deletion reaches, in the output's own plan, and runs it again
 * ({@code capture/frame_io.replayed}); captured queries never call it.
 */
public final class Kept {
    private static String parsedSpec;
    private static Roaring64NavigableMap parsed;

    private Kept() {
    }

    /** Whether record {@code id} is kept (not in {@code deleted}). */
    public static boolean keeps(String deleted, Long id) {
        return id == null || !deletedOf(deleted).contains(id);
    }

    private static synchronized Roaring64NavigableMap deletedOf(String spec) {
        if (!spec.equals(parsedSpec)) {
            parsed = IdSets.read(Base64.getDecoder().decode(spec));
            parsedSpec = spec;
        }
        return parsed;
    }
}
