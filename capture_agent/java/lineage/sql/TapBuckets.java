package lineage.sql;

import java.util.Arrays;

/**
 * The second step of {@link TapPairs#sort}: the rows {@code [from, to)} of one bucket put in group
 * order where they are (through a copy of the bucket's own, in cache), each group's rows in the
 * order they were. A bucket's groups share their top bits (their sign too), so signed order is
 * unsigned order there.
 */
final class TapBuckets {
    private int[] groupOf = new int[0];  // a row's group: its index among the bucket's groups
    private long[] table = new long[64];  // open addressing: group, or EMPTY
    private int[] index = new int[64];
    private long[] found = new long[16];  // the bucket's groups, as found
    private int[] counts = new int[16];
    /** The bucket's rows, copied: its groups, and each source's ids. */
    private long[] keys = new long[0];
    private final long[][] rows;
    private static final long EMPTY = Long.MIN_VALUE;  // no group of this bucket (its sign would differ)

    TapBuckets(int sources) {
        rows = new long[sources][0];
    }

    /** Sorts the rows {@code [from, to)} of {@code keysAt} and {@code rowsAt} by group; the groups
     * there. */
    int sort(long[] keysAt, long[][] rowsAt, int from, int to) {
        int n = to - from;
        if (n == 0) {
            return 0;
        }
        if (keysAt[from] == keysAt[to - 1] && allSame(keysAt, from, to)) {
            return 1;
        }
        if (keys.length < n) {
            keys = new long[n];
            groupOf = new int[n];
            for (int s = 0; s < rows.length; s++) {
                rows[s] = new long[n];
            }
        }
        System.arraycopy(keysAt, from, keys, 0, n);
        for (int s = 0; s < rows.length; s++) {
            System.arraycopy(rowsAt[s], from, rows[s], 0, n);
        }
        int slots = Integer.highestOneBit(Math.max(16, n) * 2 - 1) * 2;
        if (table.length < slots) {
            table = new long[slots];
            index = new int[slots];
        }
        long mark = keys[0] < 0 ? 0L : EMPTY;  // a value no group of this bucket has
        Arrays.fill(table, 0, slots, mark);
        int distinct = 0;
        for (int i = 0; i < n; i++) {
            long key = keys[i];
            int slot = (int) ((key ^ (key >>> 31)) * 0x9E3779B97F4A7C15L >>> 33) & (slots - 1);
            while (table[slot] != mark && table[slot] != key) {
                slot = (slot + 1) & (slots - 1);
            }
            if (table[slot] == mark) {
                if (distinct == found.length) {
                    found = Arrays.copyOf(found, distinct * 2);
                    counts = Arrays.copyOf(counts, distinct * 2);
                }
                table[slot] = key;
                index[slot] = distinct;
                found[distinct] = key;
                counts[distinct++] = 0;
            }
            int g = index[slot];
            groupOf[i] = g;
            counts[g]++;
        }
        long[] order = Arrays.copyOf(found, distinct);
        Arrays.sort(order);
        int[] begin = new int[distinct];  // by a group's index: where its rows go
        int next = from;
        for (long key : order) {
            int slot = (int) ((key ^ (key >>> 31)) * 0x9E3779B97F4A7C15L >>> 33) & (slots - 1);
            while (table[slot] != key) {
                slot = (slot + 1) & (slots - 1);
            }
            int g = index[slot];
            begin[g] = next;
            next += counts[g];
        }
        for (int i = 0; i < n; i++) {
            int dest = begin[groupOf[i]]++;
            keysAt[dest] = keys[i];
            for (int s = 0; s < rows.length; s++) {
                rowsAt[s][dest] = rows[s][i];
            }
        }
        return distinct;
    }

    private static boolean allSame(long[] keys, int from, int to) {
        for (int i = from + 1; i < to; i++) {
            if (keys[i] != keys[from]) {
                return false;
            }
        }
        return true;
    }
}
