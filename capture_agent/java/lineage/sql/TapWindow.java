package lineage.sql;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;

import org.roaringbitmap.BitmapContainer;
import org.roaringbitmap.RoaringBitmap;

/**
 * One source's ids in a task's {@link TapFew} groups while they come dense, as a scan of files
 * gives them: for each file (the ids' top 32 bits), pages of a byte for each id, a page for each
 * 16-bit chunk of the file's ids (a Roaring bitmap's container), the byte its group's index + 1
 * (0: no row). A row costs a byte written in the page at hand; the groups' bitmaps are built
 * once, at the end, a container from each page ({@link #bitmaps}). A page is at most 64 KB,
 * made as ids reach it (a kilobyte, doubled as ids reach further; whole after a whole one):
 * one array of a file's ids, doubled as it grew, was copied at each doubling, and past a
 * megabyte each copy was a humongous object of the JVM's G1 collector, which starts a
 * collection and a concurrent marking of the heap (on two cores, against the tasks). An id
 * that does not fit says no ({@link #mark}), and the window's ids go to the groups' lists
 * ({@link #each}), which take the source's ids from then on: an id of a chunk below its file's
 * first, of a file seen before, twice, of group 255 or later, or whose page would make the
 * pages past their first kilobytes more than eight times the ids marked and 64 KB.
 */
final class TapWindow {
    /** Ids of a page: a 16-bit chunk's. */
    static final int PAGE = 1 << 16;
    private static final int SLACK = 1 << 16;
    /** Groups up to which {@link #fill} compares eight bytes at once. */
    static final int SWAR = 16;
    private final List<Long> firsts = new ArrayList<>();  // each file's first page's first id
    private final List<byte[][]> files = new ArrayList<>();  // each file's pages (null: no id)
    /** The page at hand (empty: none yet), of ids from {@link #start}. */
    byte[] bytes = new byte[0];
    long start = -1;
    private long pages;  // bytes of the pages made
    private long marked;  // ids marked in the pages but the page at hand

    /** Marks {@code id} (at least 0) as a row of group {@code g}, if it fits (the rows whose id
     * is in the page at hand are marked by {@link TapFew#marked} or {@link TapFew#add}). */
    boolean mark(long id, int g) {
        if (g >= 255 || (id >>> 32 != start >>> 32 && !open(id))) {
            return false;
        }
        if ((id - start < 0 || id - start >= bytes.length) && !turn(id)) {
            return false;
        }
        int at = (int) (id - start);
        if (bytes[at] != 0) {
            return false;
        }
        bytes[at] = (byte) (g + 1);
        return true;
    }

    /** Starts the pages of {@code id}'s file, unless its file has been seen before. */
    private boolean open(long id) {
        for (long file : firsts) {
            if (file >>> 32 == id >>> 32) {
                return false;
            }
        }
        firsts.add(id & ~(PAGE - 1L));
        files.add(new byte[1][]);
        return true;
    }

    /**
     * Makes the page of {@code id} (of the file at hand) the page at hand, reaching {@code id}: a
     * new page is a kilobyte, or a whole page after a whole page of the file's (a scan's ids), and
     * a page grows by doubling; it says no when the pages would pass the bound.
     */
    private boolean turn(long id) {
        long first = firsts.get(firsts.size() - 1);
        if (id < first) {
            return false;
        }
        marked += count(bytes);  // the page left: its ids counted once, while it is not at hand
        bytes = new byte[0];
        byte[][] file = files.get(files.size() - 1);
        int p = (int) ((id - first) >>> 16);
        int at = (int) (id - first) & (PAGE - 1);
        if (p >= file.length) {
            file = Arrays.copyOf(file, Math.max(p + 1, 2 * file.length));
            files.set(files.size() - 1, file);
        }
        byte[] page = file[p];
        int length = page == null ? 0 : page.length;
        if (at >= length) {
            int grown = Math.max(length == 0 ? 1024 : 2 * length, Integer.highestOneBit(at) << 1);
            if (length == 0 && p > 0 && file[p - 1] != null && file[p - 1].length == PAGE) {
                grown = PAGE;
            }
            grown = Math.min(PAGE, grown);
            if (grown > 1024 && pages + grown - length > 8 * marked + SLACK) {
                return false;
            }
            page = page == null ? new byte[grown] : Arrays.copyOf(page, grown);
            file[p] = page;
            pages += grown - length;
        }
        if (length > 0) {
            marked -= count(page);  // a page made just now has none
        }
        bytes = page;
        start = first + ((long) p << 16);
        return true;
    }

    private static int count(byte[] page) {
        int n = 0;
        for (byte b : page) {
            n += b == 0 ? 0 : 1;
        }
        return n;
    }

    /**
     * Each of the {@code count} groups' ids as Roaring bitmaps by their top 32 bits: for each
     * page, a bitmap container of each group's, its bits set from the bytes ({@link #fill}),
     * appended to the group's bitmap (the library's own form of a chunk; a small one becomes a
     * sorted array): a nanosecond or two an id, where adding each id to its group's bitmap cost
     * some ten.
     */
    List<TreeMap<Long, RoaringBitmap>> bitmaps(int count) {
        List<TreeMap<Long, RoaringBitmap>> out = new ArrayList<>();
        for (int g = 0; g < count; g++) {
            out.add(new TreeMap<>());
        }
        long[][] words = new long[count + 1][1024];
        boolean[] seen = new boolean[count + 1];
        for (int f = 0; f < firsts.size(); f++) {
            long first = firsts.get(f);
            RoaringBitmap[] sets = new RoaringBitmap[count];
            byte[][] file = files.get(f);
            for (int p = 0; p < file.length; p++) {
                if (file[p] == null) {
                    continue;
                }
                long key = ((first & 0xFFFFFFFFL) >>> 16) + p;
                fill(file[p], count, words, seen);
                for (int g = 0; g < count; g++) {
                    if (seen[g + 1]) {
                        if (sets[g] == null) {
                            sets[g] = new RoaringBitmap();
                            out.get(g).put(first >>> 32, sets[g]);
                        }
                        sets[g].append((char) key, new BitmapContainer(words[g + 1], -1).repairAfterLazy());
                        words[g + 1] = new long[1024];  // the container keeps the words
                    }
                }
            }
        }
        return out;
    }

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long LOW7 = 0x7F7F7F7F7F7F7F7FL;

    /**
     * Sets, in {@code words[v]} (zeroed: 65,536 bits), bit {@code k} for each byte {@code
     * page[k] == v}, and {@code seen[v]} if any (v: 1 to {@code count}; the bits of 0 are not
     * set). Of {@link #SWAR} groups or fewer, 64 bytes at a time: for each group, eight bytes
     * compared at once in a long (the bytes equal to the group's become 0x80, gathered into 8
     * bits by one multiply), no branch on the bytes; else a byte at a time.
     */
    static void fill(byte[] page, int count, long[][] words, boolean[] seen) {
        Arrays.fill(seen, false);
        int i = 0;
        if (count <= SWAR) {
            for (; i + 64 <= page.length; i += 64) {
                for (int v = 1; v <= count; v++) {
                    long pattern = v * 0x0101010101010101L;
                    long mask = 0;
                    for (int k = 0; k < 8; k++) {
                        long x = (long) LONGS.get(page, i + 8 * k) ^ pattern;
                        long zero = ~(((x & LOW7) + LOW7) | x | LOW7);  // 0x80 in each byte of x that is 0
                        mask |= ((zero >>> 7) * 0x0102040810204080L >>> 56) << (8 * k);
                    }
                    words[v][i >>> 6] = mask;
                    seen[v] |= mask != 0;
                }
            }
        }
        for (; i < page.length; i++) {
            one(page[i] & 0xFF, i, words, seen);
        }
    }

    private static void one(int v, int bit, long[][] words, boolean[] seen) {
        if (v != 0) {
            words[v][bit >>> 6] |= 1L << bit;
            seen[v] = true;
        }
    }

    /** Each id marked and its group, file by file as they came, each file's in id order. */
    void each(IdGroup to) {
        for (int f = 0; f < firsts.size(); f++) {
            long first = firsts.get(f);
            byte[][] file = files.get(f);
            for (int p = 0; p < file.length; p++) {
                byte[] page = file[p];
                for (int i = 0; page != null && i < page.length; i++) {
                    if (page[i] != 0) {
                        to.take(first + ((long) p << 16) + i, (page[i] & 0xFF) - 1);
                    }
                }
            }
        }
    }

    /** Takes an id of a group. */
    interface IdGroup {
        void take(long id, int group);
    }
}
