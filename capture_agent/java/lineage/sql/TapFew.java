package lineage.sql;

import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

import org.roaringbitmap.RoaringBitmap;

/**
 * A task's first {@link #FEW} groups, each with the ids of each source ({@link TapGroupIds});
 * {@link #add} says no (and changes nothing) to a new group past them. While a source's ids
 * come dense (a scan of files), a row only marks its id's group in the source's {@link TapWindow};
 * the first id that does not fit there moves the window's ids into the groups' lists, which
 * take the source's ids from then on.
 */
final class TapFew {
    /** Groups a task keeps apart as rows come (see {@link TapPairs}). */
    static final int FEW = 256;
    private static final int SLOTS = 2 * FEW;  // an open-addressing table of group -> index + 1
    final long[] keys = new long[FEW];
    /** Each group's ids of each source. */
    final TapGroupIds[][] ids = new TapGroupIds[FEW][];
    int count;
    long rows;
    private final int[] table = new int[SLOTS];
    /** A cache of {@link #find} for {@link #marked}: at {@code group & (SLOTS - 1)}, the group
     * found last there (-1: none; groups are at least 0), and its index + 1 as the byte of its
     * window's ids (0: none). */
    private final long[] cached = new long[SLOTS];
    private final byte[] codes = new byte[SLOTS];
    private final int sources;
    /** Each source's window (null: its ids are in the groups' lists). */
    private final TapWindow[] windows;

    TapFew(int sources) {
        this.sources = sources;
        windows = new TapWindow[sources];
        for (int s = 0; s < sources; s++) {
            windows[s] = new TapWindow();
        }
        Arrays.fill(cached, -1L);
    }

    /**
     * The row of one source's tap, when it is only a byte to write: its group found in the
     * cache, its id in the window's bytes so far and not marked. Else false, and {@link #add}
     * takes the row: the few instructions here are what Spark's generated aggregate runs for
     * most rows of a report by a few keys.
     */
    boolean marked(long group, long id) {
        int slot = (int) group & (SLOTS - 1);
        TapWindow window = windows[0];
        if (cached[slot] != group || window == null) {
            return false;
        }
        byte[] bytes = window.bytes;
        long at = id - window.start;
        if (at < 0 || at >= bytes.length || bytes[(int) at] != 0) {
            return false;
        }
        bytes[(int) at] = codes[slot];
        rows++;
        return true;
    }

    boolean add(long group, long a, long b, long c) {
        int g = find(group);  // a probe: cheaper than a check of the last group, which rows of
        if (g < 0) {          // groups in no order miss three times in four (a report by flag)
            return false;
        }
        if (a >= 0) {
            mark(0, g, a);
        }
        if (sources > 1 && b >= 0) {
            mark(1, g, b);
        }
        if (sources > 2 && c >= 0) {
            mark(2, g, c);
        }
        rows++;
        return true;
    }

    /** {@link #add} of a row of more than three sources' ids ({@code row}: each source's, -1 none). */
    boolean addRow(long group, long[] row) {
        int g = find(group);
        if (g < 0) {
            return false;
        }
        for (int s = 0; s < sources; s++) {
            if (row[s] >= 0) {
                mark(s, g, row[s]);
            }
        }
        rows++;
        return true;
    }

    private void mark(int s, int g, long id) {
        TapWindow window = windows[s];
        if (window != null) {
            byte[] bytes = window.bytes;  // the row's work when its id is in the file's window so far:
            long at = id - window.start;  // small, so that Spark's generated code inlines the tap
            if (at >= 0 && at < bytes.length && bytes[(int) at] == 0 && g < 255) {
                bytes[(int) at] = (byte) (g + 1);
                return;
            }
            if (window.mark(id, g)) {
                return;
            }
            settle(s);
        }
        ids[g][s].add(id);
    }

    /** Moves source {@code s}'s window's ids into the groups' lists, which take its ids from then on. */
    private void settle(int s) {
        TapWindow window = windows[s];
        windows[s] = null;
        window.each((id, g) -> ids[g][s].addAfter(id));
    }

    /** Every window's ids in the groups' bitmaps (before the groups are read). */
    void settle() {
        for (int s = 0; s < sources; s++) {
            if (windows[s] != null) {
                List<TreeMap<Long, RoaringBitmap>> sets = windows[s].bitmaps(count);
                windows[s] = null;
                for (int g = 0; g < count; g++) {
                    ids[g][s].built(sets.get(g));
                }
            }
        }
    }

    /** The group's index, a new one if there is room (else -1). */
    private int find(long group) {
        int slot = (int) ((group ^ (group >>> 29)) * 0x9E3779B97F4A7C15L >>> 40) & (SLOTS - 1);
        while (table[slot] != 0) {
            int g = table[slot] - 1;
            if (keys[g] == group) {
                if (g < 255) {  // as mark's bytes
                    cached[(int) group & (SLOTS - 1)] = group;
                    codes[(int) group & (SLOTS - 1)] = (byte) (g + 1);
                }
                return g;
            }
            slot = (slot + 1) & (SLOTS - 1);
        }
        if (count == FEW) {
            return -1;
        }
        int g = count++;
        keys[g] = group;
        ids[g] = new TapGroupIds[sources];
        for (int s = 0; s < sources; s++) {
            ids[g][s] = new TapGroupIds();
        }
        table[slot] = g + 1;
        return g;
    }

    /** Its rows as rows of {@code pairs} (a group's ids of each source one per row). */
    void appendTo(TapPairs pairs) {
        settle();
        for (int g = 0; g < count; g++) {
            boolean none = true;
            for (int s = 0; s < sources; s++) {
                for (long id : ids[g][s].all()) {
                    pairs.appendOne(keys[g], s, id);
                    none = false;
                }
            }
            if (none) {  // a group whose rows had no id: still a group of the table
                pairs.appendOne(keys[g], -1, -1L);
            }
        }
    }
}
