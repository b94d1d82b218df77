package lineage.sql;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

import org.apache.hadoop.fs.Path;

/**
 * A task's rows. While the task has seen at most {@link TapFew#FEW} groups, each group keeps its
 * own set of each source's ids ({@link TapFew}): nothing to sort by group at the end, and a
 * group's ids from a scan of files come in order, as a bitmap is best built.
 * Past that, the rows are appended as they come: the group and each source's id (-1: none),
 * in chunks ({@link #CHUNK}), sorted by group when the task ends.
 */
final class TapPairs {
    /** Rows of a bucket of {@link #sort} (on average). */
    static final int BUCKET = 512;
    /**
     * Rows of a chunk at most (256 KB a column). Chunks, not one array grown by copies: the
     * copies of a task of millions of rows had allocated six times its rows' bytes, each array
     * past half of the collector's region (G1's "humongous" objects, which start its concurrent
     * cycles), and the collector's threads had taken a third of the tap's time.
     */
    static final int CHUNK = 1 << 15;
    private final int sources;
    boolean off;
    /** The first groups' ids (null: past them, or nothing kept). */
    TapFew few;
    /** The chunks filled: each the groups, then each source's ids. */
    private final List<long[][]> full = new ArrayList<>();
    /** The chunk being filled: {@link #at} rows of its {@link #chunkGroups} and ids. */
    private long[][] chunk;
    private long[] chunkGroups;
    private long[] chunkA;
    private long[] chunkB;
    private long[] chunkC;
    private int at;
    private int size;
    /** The rows sorted by group ({@link #sort}; null before). */
    private long[] groups;
    private long[][] ids;
    private int groupCount;

    TapPairs(int sources) {
        this.sources = sources;
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

    /** {@link #add} of a row of more than three sources' ids ({@code row}: each source's, -1 none). */
    void addRow(long group, long[] row) {
        if (few != null) {
            if (few.addRow(group, row)) {
                return;
            }
            few.appendTo(this);
            few = null;
        }
        int i = next(group);
        for (int s = 0; s < sources; s++) {
            chunk[1 + s][i] = row[s];
        }
    }

    /** A row of one source's id ({@code source}; -1: none), the other sources' none. */
    void appendOne(long group, int source, long id) {
        int i = next(group);
        for (int s = 0; s < sources; s++) {
            chunk[1 + s][i] = s == source ? id : -1L;
        }
    }

    void append(long group, long a, long b, long c) {
        int i = next(group);
        chunkA[i] = a;
        if (chunkB != null) {
            chunkB[i] = b;
        }
        if (chunkC != null) {
            chunkC[i] = c;
        }
    }

    /** The place of a new row of {@code group} in the chunk being filled (a new chunk when it is full). */
    private int next(long group) {
        if (chunkGroups == null || at == chunkGroups.length) {
            nextChunk();
        }
        chunkGroups[at] = group;
        size++;
        return at++;
    }

    /** A new chunk, twice the last one's rows (from 1024: a task of a few hundred groups holds
     * little), at most {@link #CHUNK}. */
    private void nextChunk() {
        if (chunk != null) {
            full.add(chunk);
        }
        int rows = chunkGroups == null ? 1024 : Math.min(CHUNK, chunkGroups.length * 2);
        chunk = new long[1 + sources][rows];
        chunkGroups = chunk[0];
        chunkA = chunk[1];
        chunkB = sources > 1 ? chunk[2] : null;
        chunkC = sources > 2 ? chunk[3] : null;
        at = 0;
    }

    /**
     * Sorts the rows by group (as unsigned longs), stably, into {@link #groups} and {@link #ids}:
     * one counting pass over the groups' top bits, then the rows copied from the chunks into
     * buckets of about {@link #BUCKET} rows (each chunk let go once copied), then each bucket,
     * small enough to stay in cache, is put in group order by a counting sort over its own groups
     * (found in an open-addressing table, {@link TapBuckets}). A radix sort of 16-bit digits took
     * four passes over all the rows, each scattering them over 65,536 places.
     */
    void sort() {
        List<long[][]> chunks = new ArrayList<>(full);
        int[] filled = new int[chunks.size() + 1];  // rows of each chunk: all but the last are full
        for (int k = 0; k < chunks.size(); k++) {
            filled[k] = chunks.get(k)[0].length;
        }
        if (chunk != null) {
            chunks.add(chunk);
            filled[chunks.size() - 1] = at;
        }
        full.clear();
        chunk = null;
        chunkGroups = chunkA = chunkB = chunkC = null;
        groups = new long[size];
        ids = new long[sources][size];
        if (size == 0) {
            return;
        }
        int bits = Math.max(1, Math.min(16, 64 - Long.numberOfLeadingZeros(size / BUCKET)));
        int shift = 64 - bits;
        int[] starts = new int[(1 << bits) + 1];
        for (int k = 0; k < chunks.size(); k++) {
            long[] keys = chunks.get(k)[0];
            for (int i = 0, n = filled[k]; i < n; i++) {
                starts[(int) (keys[i] >>> shift) + 1]++;
            }
        }
        for (int d = 0; d < 1 << bits; d++) {
            starts[d + 1] += starts[d];
        }
        int[] next = Arrays.copyOf(starts, 1 << bits);
        for (int k = 0; k < chunks.size(); k++) {
            long[][] c = chunks.get(k);
            int n = filled[k];
            long[] keys = c[0];
            if (sources == 1) {
                long[] from = c[1];
                long[] to = ids[0];
                for (int i = 0; i < n; i++) {
                    int dest = next[(int) (keys[i] >>> shift)]++;
                    groups[dest] = keys[i];
                    to[dest] = from[i];
                }
            } else {
                for (int i = 0; i < n; i++) {
                    int dest = next[(int) (keys[i] >>> shift)]++;
                    groups[dest] = keys[i];
                    for (int s = 0; s < sources; s++) {
                        ids[s][dest] = c[1 + s][i];
                    }
                }
            }
            chunks.set(k, null);  // copied: the collector may take it back
        }
        TapBuckets buckets = new TapBuckets(sources);
        for (int d = 0; d < 1 << bits; d++) {
            groupCount += buckets.sort(groups, ids, starts[d], starts[d + 1]);
        }
    }

    /** The table's rows, in group order: each source's ids of a group are list[from, to), sorted
     * (ids below 0, none, first; an id twice: a row read twice). The rows past {@link TapFew} are
     * one {@link TapRow} read again for each group: the writer writes each before the next. */
    Iterable<TapRow> rows() {
        if (few != null) {
            return fewRows();
        }
        if (groups == null) {
            sort();
        }
        return () -> new Iterator<TapRow>() {
            private final TapRow row = new TapRow(0L, ids, new int[sources], new int[sources], null);
            private int start;

            @Override
            public boolean hasNext() {
                return start < size;
            }

            @Override
            public TapRow next() {
                if (start >= size) {
                    throw new NoSuchElementException();
                }
                int end = start + 1;
                while (end < size && groups[end] == groups[start]) {
                    end++;
                }
                for (int s = 0; s < sources; s++) {
                    Arrays.sort(ids[s], start, end);
                    row.from[s] = start;
                    row.to[s] = end;
                }
                row.group = groups[start];
                start = end;
                return row;
            }
        };
    }

    private List<TapRow> fewRows() {
        List<TapRow> rows = new ArrayList<>();
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

    /** The groups of the table ({@link #rows}). */
    int groups() {
        if (few != null) {
            return few.count;
        }
        if (groups == null) {
            sort();
        }
        return groupCount;
    }

    /** Writes the task's table at {@code path} ({@link TapTable#write}). */
    void write(Path path) {
        long seen = few != null ? few.rows : size;
        TapTable.write(path, sources, seen, groups(), rows());
    }
}
