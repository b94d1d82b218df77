package lineage.sql;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

import org.roaringbitmap.RoaringBitmap;

/**
 * The ids of one source in one group of {@link TapFew}, appended as they come to a list of at
 * most {@link #FOLD} ids; a full list whose ids are in order (each at least the one before,
 * as a scan of files gives them) goes into the group's bitmaps ({@link TapFolded}) in one pass,
 * the bitmap at hand in cache, and the list starts again. Ids out of order stay in the list,
 * which then grows, and are sorted once, at the end: setting them one by one in bitmaps
 * had cost a search of the bitmaps for each (250 ns an id, where the list costs a few).
 */
final class TapGroupIds {
    /** Ids of a group of a {@link TapFew} (of one source) that go into its bitmaps together. */
    static final int FOLD = 1024;
    private long[] list = new long[64];
    private int size;
    /** The ids folded, all at most {@link #last} (null: none). */
    private TapFolded folded;
    private long last = -1;
    private boolean ordered = true;

    void add(long id) {
        if (size == list.length) {
            if (!(ordered && size >= FOLD && fold())) {
                list = Arrays.copyOf(list, size * 2);
            }
        }
        list[size++] = id;
    }

    /** Takes {@code sets} (the group's ids by their top 32 bits) as its bitmaps; it has no id yet. */
    void built(TreeMap<Long, RoaringBitmap> sets) {
        if (!sets.isEmpty()) {
            folded = new TapFolded(sets);
            Map.Entry<Long, RoaringBitmap> top = sets.lastEntry();
            last = top.getKey() << 32 | Integer.toUnsignedLong(top.getValue().last());
        }
    }

    /** Adds {@code id}: straight into the bitmaps when it comes in order after them and no list waits. */
    void addAfter(long id) {
        if (size == 0 && ordered && id >= last) {
            if (folded == null) {
                folded = new TapFolded();
            }
            folded.add(id);
            last = id;
        } else {
            add(id);
        }
    }

    /** Folds the list into the bitmaps, if its ids are in order after those folded. */
    private boolean fold() {
        long previous = last;
        for (int i = 0; i < size; i++) {
            if (list[i] < previous) {
                ordered = false;
                return false;
            }
            previous = list[i];
        }
        if (folded == null) {
            folded = new TapFolded();
        }
        for (int i = 0; i < size; i++) {
            folded.add(list[i]);
        }
        last = previous;
        size = 0;
        return true;
    }

    /** The ids as bitmaps, when they all came in order (else null: {@link #all}). */
    TapFolded bitmaps() {
        if (ordered && size > 0) {
            fold();
        }
        return ordered ? folded : null;
    }

    /** Every id, sorted (an id twice: twice). */
    long[] all() {
        long[] before = folded == null ? new long[0] : folded.all();
        long[] out = Arrays.copyOf(before, before.length + size);
        System.arraycopy(list, 0, out, before.length, size);
        Arrays.sort(out);
        return out;
    }
}
