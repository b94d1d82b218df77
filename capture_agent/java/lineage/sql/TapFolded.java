package lineage.sql;

import java.util.Map;
import java.util.TreeMap;

import org.roaringbitmap.PeekableIntIterator;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.RoaringBitmapWriter;

/**
 * The ids of a group of {@link TapFew} (of one source) that came in order ({@link TapGroupIds}), kept
 * as Roaring bitmaps by their top 32 bits, each written by the library's appender ({@code
 * RoaringBitmapWriter}): an id costs a bit set in the chunk at hand. An id twice is kept once.
 */
final class TapFolded {
    private final TreeMap<Long, RoaringBitmapWriter<RoaringBitmap>> parts = new TreeMap<>();
    private final TreeMap<Long, RoaringBitmap> built;
    private long high = -1;
    private RoaringBitmapWriter<RoaringBitmap> part;

    TapFolded() {
        built = new TreeMap<>();
    }

    /** The ids of {@code sets} (by their top 32 bits), and those added. */
    TapFolded(TreeMap<Long, RoaringBitmap> sets) {
        built = sets;
    }

    /** Adds {@code id} (at least 0). */
    void add(long id) {
        long top = id >>> 32;
        if (top != high) {
            part = parts.computeIfAbsent(top, h -> RoaringBitmapWriter.writer().get());
            high = top;
        }
        part.add((int) id);
    }

    private TreeMap<Long, RoaringBitmap> bitmaps() {
        TreeMap<Long, RoaringBitmap> out = new TreeMap<>(built);
        for (Map.Entry<Long, RoaringBitmapWriter<RoaringBitmap>> entry : parts.entrySet()) {
            out.merge(entry.getKey(), entry.getValue().get(), (x, y) -> RoaringBitmap.or(x, y));
        }
        return out;
    }

    /** The set, in the portable 64-bit format. */
    byte[] bytes() {
        return IdSets.portable(bitmaps());
    }

    /** Every id, sorted, each once. */
    long[] all() {
        TreeMap<Long, RoaringBitmap> sets = bitmaps();
        long n = 0;
        for (RoaringBitmap set : sets.values()) {
            n += set.getLongCardinality();
        }
        long[] out = new long[Math.toIntExact(n)];
        int i = 0;
        for (Map.Entry<Long, RoaringBitmap> set : sets.entrySet()) {
            long high = set.getKey() << 32;
            PeekableIntIterator it = set.getValue().getIntIterator();
            while (it.hasNext()) {
                out[i++] = high | Integer.toUnsignedLong(it.next());
            }
        }
        return out;
    }
}
