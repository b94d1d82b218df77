package lineage.sql;

import org.apache.parquet.io.api.Binary;
import org.apache.parquet.io.api.RecordConsumer;

/** A row of the table: the group, and each source's ids: {@code lists[s][from[s], to[s])}
 * (sorted), or a group of {@link TapFew}'s {@code folded[s]} (null: none). {@link TapPairs} moves
 * one row over its groups (group, from and to). */
final class TapRow {
    /** The ids' columns, by source, named once (not for each row a task writes). */
    private static final String[] NAMES = new String[Tap.MAX_SOURCES];

    static {
        for (int s = 0; s < NAMES.length; s++) {
            NAMES[s] = "in_ids_" + s;
        }
    }

    long group;
    final long[][] lists;
    final int[] from;
    final int[] to;
    final TapFolded[] folded;

    TapRow(long group, long[][] lists, int[] from, int[] to, TapFolded[] folded) {
        this.group = group;
        this.lists = lists;
        this.from = from;
        this.to = to;
        this.folded = folded;
    }

    void write(RecordConsumer out, int sources, boolean sets) {
        out.startMessage();
        out.startField("out_id", 0);
        out.addLong(group);
        out.endField("out_id", 0);
        for (int s = 0; s < sources; s++) {
            long[] list = lists[s];
            int k = from[s];
            int end = to[s];
            while (k < end && list[k] < 0) {
                k++;
            }
            TapFolded f = folded == null ? null : folded[s];
            if (k < end || f != null) {
                String name = NAMES[s];
                out.startField(name, s + 1);
                if (sets) {
                    byte[] set = f == null ? IdSets.sorted(list, k, end) : f.bytes();
                    out.addBinary(Binary.fromConstantByteArray(set));
                } else {
                    if (f != null) {
                        list = f.all();
                        k = 0;
                        end = list.length;
                    }
                    long last = -1;
                    for (; k < end; k++) {
                        if (list[k] != last) {  // an id twice in one group (a row read twice): once
                            out.addLong(list[k]);
                            last = list[k];
                        }
                    }
                }
                out.endField(name, s + 1);
            }
        }
        out.endMessage();
    }
}
