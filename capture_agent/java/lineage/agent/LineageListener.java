package lineage.agent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerApplicationEnd;
import org.apache.spark.scheduler.SparkListenerApplicationStart;
import org.apache.spark.scheduler.SparkListenerEvent;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerStageSubmitted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.TaskInfo;
import org.apache.spark.util.JsonProtocol;

/**
 * Coarse-lineage listener of the capture agent.
 *
 * Task events arrive at thousands per second; sending each one to Python over py4j costs
 * milliseconds, so they are folded into per-stage counters here and never leave the JVM.
 * Everything else is turned into Spark's own event-log JSON on the listener-bus thread and
 * parked in a bounded queue that Python drains in one call per batch. Nothing here blocks:
 * a full queue drops the event and counts the drop.
 */
public class LineageListener extends SparkListener {
    private static final String SQL_END =
        "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd";
    // Set by setLimits() before the listener is registered, hence not final.
    private ArrayBlockingQueue<String> queue;
    private long maxQueuedChars;
    private final AtomicLong queuedChars = new AtomicLong();
    private final AtomicLong dropped = new AtomicLong();
    private long droppedReported = 0;
    // stage id and attempt -> {tasks, failed tasks, summed task duration ms}
    private final ConcurrentHashMap<Long, long[]> taskCounts = new ConcurrentHashMap<>();

    public LineageListener() {
        setLimits(10000, 64L * 1024 * 1024);
    }

    /**
     * Sizes the queue; call before registering. (Python creates the object by reflection
     * through its own class loader, where a no-argument constructor is the simple path.)
     */
    public void setLimits(int maxEvents, long maxChars) {
        this.queue = new ArrayBlockingQueue<>(Math.max(16, maxEvents));
        this.maxQueuedChars = maxChars;
    }

    /** Parks one JSON line; called by both listeners, never blocks. */
    public void offer(String json) {
        if (json == null) {
            return;
        }
        if (queuedChars.addAndGet(json.length()) > maxQueuedChars || !queue.offer(json)) {
            queuedChars.addAndGet(-json.length());
            dropped.incrementAndGet();
        }
    }

    /** Returns up to maxEvents queued events as newline-separated JSON ("" when none). */
    public synchronized String drain(int maxEvents) {
        List<String> out = new ArrayList<>();
        long lost = dropped.get();
        if (lost != droppedReported) {
            out.add("{\"Event\":\"lineage.Dropped\",\"Count\":" + (lost - droppedReported) + "}");
            droppedReported = lost;
        }
        queue.drainTo(out, Math.max(1, maxEvents));
        long chars = 0;
        for (String s : out) {
            chars += s.length();
        }
        queuedChars.addAndGet(-chars);
        return String.join("\n", out);
    }

    public int queued() {
        return queue.size();
    }

    public long droppedCount() {
        return dropped.get();
    }

    private void serialise(SparkListenerEvent event) {
        try {
            offer(JsonProtocol.sparkEventToJsonString(event));
        } catch (Throwable t) {
            dropped.incrementAndGet();
        }
    }

    private static long stageKey(int stageId, int attempt) {
        return (((long) stageId) << 20) | (attempt & 0xFFFFF);
    }

    @Override
    public void onApplicationStart(SparkListenerApplicationStart event) {
        serialise(event);
    }

    @Override
    public void onApplicationEnd(SparkListenerApplicationEnd event) {
        serialise(event);
    }

    @Override
    public void onJobStart(SparkListenerJobStart event) {
        serialise(event);
    }

    @Override
    public void onJobEnd(SparkListenerJobEnd event) {
        serialise(event);
    }

    @Override
    public void onStageSubmitted(SparkListenerStageSubmitted event) {
        serialise(event);
    }

    @Override
    public void onOtherEvent(SparkListenerEvent event) {
        // Compared by name so that a Spark without the SQL module never loads SqlIo.
        if (!SQL_END.equals(event.getClass().getName())) {
            return;
        }
        try {
            offer(SqlIo.describe(
                (org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd) event));
        } catch (Throwable t) {
            // A plan shape we do not know costs us its datasets, never the query.
            offer("{\"Event\":\"lineage.Error\",\"Message\":"
                + SqlIo.quote(String.valueOf(t)) + "}");
        }
    }

    @Override
    public void onTaskEnd(SparkListenerTaskEnd event) {
        TaskInfo info = event.taskInfo();
        if (info == null) {
            return;
        }
        long[] counts = taskCounts.computeIfAbsent(
            stageKey(event.stageId(), event.stageAttemptId()), k -> new long[3]);
        synchronized (counts) {
            counts[0] += 1;
            if (info.failed() || info.killed()) {
                counts[1] += 1;
            }
            counts[2] += Math.max(0L, info.duration());
        }
    }

    @Override
    public void onStageCompleted(SparkListenerStageCompleted event) {
        try {
            String json = JsonProtocol.sparkEventToJsonString(event);
            long[] counts = taskCounts.remove(
                stageKey(event.stageInfo().stageId(), event.stageInfo().attemptNumber()));
            if (counts != null && json.endsWith("}")) {
                synchronized (counts) {
                    json = json.substring(0, json.length() - 1)
                        + ",\"Lineage Task Counts\":{\"Tasks\":" + counts[0]
                        + ",\"Failed\":" + counts[1] + ",\"Duration\":" + counts[2] + "}}";
                }
            }
            offer(json);
        } catch (Throwable t) {
            dropped.incrementAndGet();
        }
    }
}
