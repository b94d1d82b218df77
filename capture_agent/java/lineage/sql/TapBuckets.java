package lineage.sql;

import java.util.Arrays;

/**
 * The second step of {@link TapPairs#sort}: the rows {@code [from, to)} of one bucket, copied from
 * {@code keys} and {@code rows} to {@code keysTo} and {@code rowsTo} in group order, each
 * group's rows in the order they were. A bucket's groups share their top bits (their sign too),
 * so signed order is unsigned order there.
 */
final class TapBuckets {
    private int[] groupOf;  // a row's group: its index among the bucket's groups
    private long[] table = new long[64];  // open addressing: group, or EMPTY
    private int[] index = new int[64];
    private long[] found = new long[16];  // the bucket's groups, as found
    private int[] counts = new int[16];
    private static final long EMPTY = Long.MIN_VALUE;  // no group of this bucket (its sign would differ)

    TapBuckets(int largest) {
        groupOf = new int[Math.max(1, largest)];
    }

    void sort(long[] keys, long[][] rows, int from, int to, long[] keysTo, long[][] rowsTo) {
        int n = to - from;
        if (n == 0) {
            return;
        }
        if (keys[from] == keys[to - 1] && allSame(keys, from, to)) {
            System.arraycopy(keys, from, keysTo, from, n);
            for (int s = 0; s < rows.length; s++) {
                System.arraycopy(rows[s], from, rowsTo[s], from, n);
            }
            return;
        }
        int slots = Integer.highestOneBit(Math.max(16, n) * 2 - 1) * 2;
        if (table.length < slots) {
            table = new long[slots];
            index = new int[slots];
        }
        long mark = keys[from] < 0 ? 0L : EMPTY;  // a value no group of this bucket has
        Arrays.fill(table, 0, slots, mark);
        int distinct = 0;
        for (int i = from; i < to; i++) {
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
            groupOf[i - from] = g;
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
        for (int i = from; i < to; i++) {
            int dest = begin[groupOf[i - from]]++;
            keysTo[dest] = keys[i];
            for (int s = 0; s < rows.length; s++) {
                rowsTo[s][dest] = rows[s][i];
            }
        }
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
