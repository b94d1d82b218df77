package lineage.sql;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.fs.Path;

/**
 * A task's rows. While the task has seen at most {@link TapFew#FEW} groups, each group keeps its
 * own set of each source's ids ({@link TapFew}): nothing to sort by group at the end, and a
 * group's ids from a scan of files come in order, as a bitmap is best built.
 * Past that, the rows are appended as they come: the group and each source's id (-1: none),
 * sorted by group when the task ends.
 */
final class TapPairs {
    /** Rows of a bucket of {@link #sort} (on average). */
    static final int BUCKET = 512;
    private final int sources;
    boolean off;
    /** The first groups' ids (null: past them, or nothing kept). */
    TapFew few;
    private int size;
    private long[] groups = new long[1024];
    private final long[][] ids;

    TapPairs(int sources) {
        this.sources = sources;
        ids = new long[sources][1024];
        few = new TapFew(sources);
    }

    void add(long group, long ia, long ib, long ic) {
        if (few != null) {
            if (few.add(group, ia, ib, ic)) {
                return;
            }
            few.appendTo(this);
            few = null;
        }
        append(group, ia, ib, ic);
    }

    void append(long group, long a, long b, long c) {
        if (size == groups.length) {
            int grown = size + (size >> 1);
            groups = Arrays.copyOf(groups, grown);
            for (int s = 0; s < sources; s++) {
                ids[s] = Arrays.copyOf(ids[s], grown);
            }
        }
        groups[size] = group;
        ids[0][size] = a;
        if (sources > 1) {
            ids[1][size] = b;
        }
        if (sources > 2) {
            ids[2][size] = c;
        }
        size++;
    }

    /**
     * Sorts the rows by group (as unsigned longs), stably: one counting pass over the groups'
     * top bits puts the rows in buckets of about {@link #BUCKET} rows, then each bucket, small
     * enough to stay in cache, is put in group order by a counting sort over its own groups
     * (found in an open-addressing table). A radix sort of 16-bit digits took four passes over
     * all the rows, each scattering them over 65,536 places.
     */
    void sort() {
        if (size < 2) {
            return;
        }
        int bits = Math.max(1, Math.min(16, 64 - Long.numberOfLeadingZeros(size / BUCKET)));
        int shift = 64 - bits;
        int[] starts = new int[(1 << bits) + 1];
        for (int i = 0; i < size; i++) {
            starts[(int) (groups[i] >>> shift) + 1]++;
        }
        int largest = 0;
        for (int d = 0; d < 1 << bits; d++) {
            largest = Math.max(largest, starts[d + 1]);
            starts[d + 1] += starts[d];
        }
        long[] keys = new long[size];
        long[][] rows = new long[sources][size];
        int[] at = Arrays.copyOf(starts, 1 << bits);
        for (int i = 0; i < size; i++) {
            int dest = at[(int) (groups[i] >>> shift)]++;
            keys[dest] = groups[i];
            for (int s = 0; s < sources; s++) {
                rows[s][dest] = ids[s][i];
            }
        }
        TapBuckets buckets = new TapBuckets(largest);
        for (int d = 0; d < 1 << bits; d++) {
            buckets.sort(keys, rows, starts[d], starts[d + 1], groups, ids);
        }
    }

    /** The table's rows, in group order: each source's ids of a group are list[from, to), sorted
     * (ids below 0, none, first; an id twice: a row read twice). */
    List<TapRow> rows() {
        List<TapRow> rows = new ArrayList<>();
        if (few != null) {
            few.settle();
            Integer[] order = new Integer[few.count];
            for (int g = 0; g < few.count; g++) {
                order[g] = g;
            }
            Arrays.sort(order, (x, y) -> Long.compare(few.keys[x], few.keys[y]));
            for (int g : order) {
                long[][] lists = new long[sources][];
                int[] to = new int[sources];
                TapFolded[] folded = new TapFolded[sources];
                for (int s = 0; s < sources; s++) {
                    folded[s] = few.ids[g][s].bitmaps();
                    lists[s] = folded[s] == null ? few.ids[g][s].all() : new long[0];
                    to[s] = lists[s].length;
                }
                rows.add(new TapRow(few.keys[g], lists, new int[sources], to, folded));
            }
            return rows;
        }
        sort();
        int start = 0;
        while (start < size) {
            int end = start + 1;
            while (end < size && groups[end] == groups[start]) {
                end++;
            }
            int[] from = new int[sources];
            int[] to = new int[sources];
            for (int s = 0; s < sources; s++) {
                Arrays.sort(ids[s], start, end);
                from[s] = start;
                to[s] = end;
            }
            rows.add(new TapRow(groups[start], ids, from, to, null));
            start = end;
        }
        return rows;
    }

    /** Writes the task's table at {@code path} ({@link TapTable#write}). */
    void write(Path path) {
        long seen = few != null ? few.rows : size;
        TapTable.write(path, sources, seen, rows());
    }
}
