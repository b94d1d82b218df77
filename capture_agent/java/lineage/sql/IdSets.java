package lineage.sql;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoSerializable;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.Aggregator;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.roaringbitmap.RoaringBitmap;
import org.roaringbitmap.RoaringBitmapWriter;
import org.roaringbitmap.longlong.Roaring64NavigableMap;

/**
 * Record id sets of DataFrame lineage, computed inside the JVM.
 *
 * A captured DataFrame carries, per source it reads, a hidden column of record ids: one id
 * (bigint) per row until an aggregate, then the set of ids of every row it was computed from
 * (binary: a Roaring bitmap in the portable 64-bit format, which pyroaring's BitMap64 reads).
 * {@link #register} adds these SQL functions to a session:
 *
 * <ul>
 *   <li>lineage_ids(bigint) - aggregate: the set of the group's ids;</li>
 *   <li>lineage_union(binary) - aggregate: the union of the group's sets;</li>
 *   <li>lineage_set(bigint) - one id (null: none) as a set;</li>
 *   <li>lineage_or(binary, binary) - the union of two sets (null: none);</li>
 *   <li>lineage_union_all(array&lt;binary&gt;) - the union of an array's sets (null or empty: none, null);</li>
 *   <li>lineage_set_all(array&lt;bigint&gt;) - an array's ids as a set (null ids skipped; null or empty: null);</li>
 *   <li>lineage_keep(string, bigint) - whether an id is not in a deleted set (what-if replays, {@link Kept}).</li>
 * </ul>
 *
 * The aggregates keep a flat array of ids per group (most groups hold a handful of records) and
 * build the bitmap once, at the end.
 */
public final class IdSets {

    /**
     * The ids gathered for one group: single ids in an append-only array (most groups hold a
     * handful of records), sets ORed into 32-bit bitmaps by the ids' top halves as they come, so
     * that a group gathering the same large set from many rows (every row of a join with a table
     * whose rows carry a set) holds each id once; the two are made one set at the end. A group's
     * first set is kept as its bytes until a second comes (a group of one row, a union with none,
     * gives those bytes back unread). Kryo writes it as the array's used part and the sets' portable
     * bytes, which it reads back as they are.
     */
    public static final class Ids implements Serializable, KryoSerializable {
        private static final long serialVersionUID = 1L;
        public long[] ids = new long[4];
        public int size;
        private byte[] first;  // the one set gathered, unread; or null
        private TreeMap<Long, RoaringBitmap> parts;  // the sets gathered, by the ids' top halves; or null

        void add(long id) {
            if (size == ids.length) {
                ids = Arrays.copyOf(ids, size * 2);
            }
            ids[size++] = id;
        }

        /** Adds {@code other}'s ids and sets (its bitmaps become this one's: {@code other} is not used after). */
        void addAll(Ids other) {
            if (size + other.size > ids.length) {
                ids = Arrays.copyOf(ids, Math.max(size + other.size, size * 2));
            }
            System.arraycopy(other.ids, 0, ids, size, other.size);
            size += other.size;
            addSet(other.first);
            if (other.parts != null) {
                for (Map.Entry<Long, RoaringBitmap> part : other.parts.entrySet()) {
                    or(read(), part.getKey(), part.getValue());
                }
            }
        }

        void addSet(byte[] set) {
            if (set == null) {
                return;
            }
            if (first == null && parts == null) {
                first = set;
                return;
            }
            TreeMap<Long, RoaringBitmap> into = read();
            ByteBuffer in = ByteBuffer.wrap(set).order(ByteOrder.LITTLE_ENDIAN);
            for (long n = in.getLong(); n > 0; n--) {
                long high = in.getInt() & 0xFFFFFFFFL;
                RoaringBitmap part = new RoaringBitmap();
                int at = in.position();
                try {
                    part.deserialize(in);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                in.position(at + part.serializedSizeInBytes());
                or(into, high, part);
            }
        }

        /** The sets gathered as bitmaps (the first one's bytes read now). */
        private TreeMap<Long, RoaringBitmap> read() {
            if (parts == null) {
                parts = new TreeMap<>();
                byte[] set = first;
                first = null;
                addSet(set);
            }
            return parts;
        }

        private static void or(TreeMap<Long, RoaringBitmap> into, long high, RoaringBitmap part) {
            RoaringBitmap had = into.putIfAbsent(high, part);
            if (had != null) {
                had.or(part);
            }
        }

        byte[] toSet() {
            if (first == null && parts == null) {
                Arrays.sort(ids, 0, size);
                return sorted(ids, 0, size);
            }
            if (size == 0 && parts == null) {
                return first;
            }
            TreeMap<Long, RoaringBitmap> all = read();
            Arrays.sort(ids, 0, size);
            RoaringBitmap part = null;
            long high = -1;
            for (int i = 0; i < size; i++) {
                if ((ids[i] >>> 32) != high) {
                    high = ids[i] >>> 32;
                    part = all.computeIfAbsent(high, h -> new RoaringBitmap());
                }
                part.add((int) ids[i]);
            }
            return portable(all);
        }

        @Override
        public void write(Kryo kryo, Output output) {
            output.writeInt(size);
            for (int i = 0; i < size; i++) {
                output.writeLong(ids[i]);
            }
            byte[] set = parts != null ? portable(parts) : first;
            output.writeInt(set == null ? -1 : set.length);
            if (set != null) {
                output.writeBytes(set);
            }
        }

        @Override
        public void read(Kryo kryo, Input input) {
            size = input.readInt();
            ids = new long[Math.max(4, size)];
            for (int i = 0; i < size; i++) {
                ids[i] = input.readLong();
            }
            int length = input.readInt();
            first = length < 0 ? null : input.readBytes(length);
            parts = null;
        }
    }

    /**
     * The sorted ids {@code list[from, to)} (none below 0) as a Roaring bitmap in the portable
     * 64-bit format (the count of 32-bit bitmaps, then each one's high 32 bits and its portable
     * serialization), built by a 32-bit writer per high part: a sorted append costs a few
     * nanoseconds where Roaring64NavigableMap.addLong looks up the high part each time. The bytes
     * are those of {@link #write} of the same ids.
     */
    static byte[] sorted(long[] list, int from, int to) {
        TreeMap<Long, RoaringBitmap> parts = new TreeMap<>();
        int k = from;
        while (k < to) {
            long high = list[k] >>> 32;
            RoaringBitmapWriter<RoaringBitmap> part = RoaringBitmapWriter.writer().get();
            for (; k < to && (list[k] >>> 32) == high; k++) {
                if (k == from || list[k] != list[k - 1]) {  // an id twice: once
                    part.add((int) list[k]);
                }
            }
            parts.put(high, part.get());
        }
        return portable(parts);
    }

    /** The set of the Roaring bitmaps of {@code parts} (by the ids' top 32 bits, each at least 0) in
     * the portable 64-bit format: their count, then each one's top half and its bitmap. */
    static byte[] portable(NavigableMap<Long, RoaringBitmap> parts) {
        int size = 8;
        for (RoaringBitmap set : parts.values()) {
            set.runOptimize();
            size += 4 + set.serializedSizeInBytes();
        }
        // RoaringBitmap's own little-endian layout, into a buffer of the right size: a DataOutputStream
        // took a call a word
        ByteBuffer out = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(parts.size());
        for (Map.Entry<Long, RoaringBitmap> part : parts.entrySet()) {
            out.putInt((int) (long) part.getKey());
            part.getValue().serialize(out);
        }
        return out.array();
    }

    static Roaring64NavigableMap read(byte[] set) {
        Roaring64NavigableMap bitmap = new Roaring64NavigableMap();
        try {
            bitmap.deserializePortable(new DataInputStream(new ByteArrayInputStream(set)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bitmap;
    }

    abstract static class Gather<IN> extends Aggregator<IN, Ids, byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public Ids zero() {
            return new Ids();
        }

        @Override
        public Ids merge(Ids a, Ids b) {
            a.addAll(b);
            return a;
        }

        @Override
        public byte[] finish(Ids ids) {
            return ids.toSet();
        }

        @Override
        public Encoder<Ids> bufferEncoder() {
            return Encoders.kryo(Ids.class);
        }

        @Override
        public Encoder<byte[]> outputEncoder() {
            return Encoders.BINARY();
        }
    }

    /** lineage_ids: the set of a group's ids. */
    public static final class Collect extends Gather<Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public Ids reduce(Ids ids, Long id) {
            if (id != null) {
                ids.add(id);
            }
            return ids;
        }
    }

    /** lineage_union: the union of a group's sets. */
    public static final class Union extends Gather<byte[]> {
        private static final long serialVersionUID = 1L;

        @Override
        public Ids reduce(Ids ids, byte[] set) {
            ids.addSet(set);
            return ids;
        }
    }

    /** Registers the functions with a session (idempotent). */
    public void register(SparkSession spark) {
        spark.udf().register("lineage_ids", functions.udaf(new Collect(), Encoders.LONG()));
        spark.udf().register("lineage_union", functions.udaf(new Union(), Encoders.BINARY()));
        spark.udf().register("lineage_set", (UDF1<Long, byte[]>) id -> {
            Ids ids = new Ids();
            if (id != null) {
                ids.add(id);
            }
            return ids.toSet();
        }, DataTypes.BinaryType);
        spark.udf().register("lineage_or", (UDF2<byte[], byte[], byte[]>) (a, b) -> {
            Ids ids = new Ids();
            ids.addSet(a);
            ids.addSet(b);
            return ids.toSet();
        }, DataTypes.BinaryType);
        spark.udf().register("lineage_union_all", (UDF1<scala.collection.Seq<byte[]>, byte[]>) sets -> {
            if (sets == null || sets.isEmpty()) {
                return null;
            }
            Ids ids = new Ids();
            scala.collection.Iterator<byte[]> each = sets.iterator();
            while (each.hasNext()) {
                ids.addSet(each.next());
            }
            return ids.toSet();
        }, DataTypes.BinaryType);
        spark.udf().register("lineage_set_all", (UDF1<scala.collection.Seq<Long>, byte[]>) list -> {
            if (list == null || list.isEmpty()) {
                return null;
            }
            Ids ids = new Ids();
            scala.collection.Iterator<Long> each = list.iterator();
            while (each.hasNext()) {
                Long id = each.next();
                if (id != null) {
                    ids.add(id);
                }
            }
            return ids.size == 0 ? null : ids.toSet();
        }, DataTypes.BinaryType);
        spark.udf().register("lineage_keep", (UDF2<String, Long, Boolean>) Kept::keeps, DataTypes.BooleanType);
    }
}
