package lineage.sql;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkContext;

/**
 * What planning one captured query made that planning the next may take as it is, because what it
 * was made of is its key: a few entries, the least recently used dropped first (Spark's cleaner
 * then frees what they held, a broadcast say, once no plan holds it either). Every query of a job
 * reads its tables again, and each read planned the same file tasks and shipped the same
 * configuration (a broadcast each) as the query before it.
 */
final class Reused<K, V> {
    private final Map<K, V> entries;

    Reused(int size) {
        entries = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
                return size() > size;
            }
        };
    }

    /** The value of {@code key}, made by {@code make} when there is none (outside the lock: making
     * one may run for a while, and another thread planning its query need not wait on it). */
    V get(K key, Supplier<V> make) {
        synchronized (entries) {
            V known = entries.get(key);
            if (known != null) {
                return known;
            }
        }
        V made = make.get();
        synchronized (entries) {
            V first = entries.putIfAbsent(key, made);
            return first != null ? first : made;
        }
    }

    /** The application a key is of (a broadcast or a task list of another SparkContext is no use). */
    static String application(SparkContext sc) {
        return sc.applicationId() + "@" + sc.startTime();
    }

    /** A SHA-256 digest of {@code text}, in hex: a key that holds little however long what it stands for. */
    static String digest(CharSequence text) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(text.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(hash);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);  // every JVM has SHA-256
        }
    }

    /** A Hadoop configuration's settings, sorted: two configurations with the same are the same to a reader. */
    static Map<String, String> settings(Configuration conf) {
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<String, String> entry : conf) {
            out.put(entry.getKey(), entry.getValue());
        }
        return out;
    }
}
