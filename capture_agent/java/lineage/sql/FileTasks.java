package lineage.sql;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.fs.Path;
import org.apache.spark.Partition;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.execution.FileSourceScanExec;
import org.apache.spark.sql.execution.ListingPartition;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.datasources.FilePartition;
import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.PartitionedFile;

import scala.jdk.javaapi.CollectionConverters;

/**
 * The tasks of Spark's own read of files: the file partitions of a plain read's scan (byte ranges
 * of files, split and packed as Spark splits and packs them for the session's settings), so that
 * the agent's readers of ORC and Parquet rows ({@link Orc}, {@link Parquet}) and of text lines
 * ({@link Lines}) read the same rows in the same tasks in the same order as Spark's readers: an
 * aggregate of floating-point values then adds them in Spark's order, to the same bits.
 */
final class FileTasks {
    /** The name of a part file Spark's write wrote, its partition number the group. */
    private static final Pattern PART = Pattern.compile("part-(\\d+)-.*");

    private FileTasks() {
    }

    /** A byte range of a file: its index among the read's files, start, length. */
    record Piece(int file, long start, long length) implements Serializable {
    }

    /** The read's tasks, each its pieces in order; {@link #files} the files they index. */
    final List<Piece[]> tasks = new ArrayList<>();
    /** The files read, sorted, as Hadoop's {@link Path} spells them. */
    String[] files;
    /** Spark's own pieces of each task, as its file scan hands them to its readers. */
    final List<PartitionedFile[]> partitioned = new ArrayList<>();

    /** The tasks of {@code plain}'s scan (Spark's read of the files: one file scan), those an
     * earlier query's read of the same files under the same settings found when there was one:
     * taking them from Spark's scan builds its input RDD, and with it Spark's reader of the files,
     * which broadcasts the configuration (a few milliseconds a read, every query). */
    static FileTasks of(Dataset<Row> plain) {
        FileSourceScanExec scan = scan(plain);
        return PLANNED.get(key(scan, plain.sparkSession()), () -> planned(scan));
    }

    /** The tasks of queries' reads planned last (a table read by every query of a job: one entry). */
    private static final Reused<String, FileTasks> PLANNED = new Reused<>(64);

    /**
     * What Spark's split of a scan's files into tasks depends on: the files (path, length, time of
     * last change) of each of its partition directories, and its values; the format, the read's
     * options, whether it reads buckets; the session's SQL settings (the split's sizes among them)
     * and its default parallelism (the executors' cores, which can change as executors come and go).
     * Kept as a digest: a table of many files would make a long key.
     */
    private static String key(FileSourceScanExec scan, org.apache.spark.sql.SparkSession session) {
        org.apache.spark.sql.classic.SparkSession classic = (org.apache.spark.sql.classic.SparkSession) session;
        HadoopFsRelation relation = scan.relation();
        StringBuilder key = new StringBuilder(Reused.application(classic.sparkContext()))
            .append('|').append(classic.leafNodeDefaultParallelism())
            .append('|').append(relation.fileFormat().getClass().getName())
            .append('|').append(new TreeMap<>(CollectionConverters.asJava(relation.options())))
            .append('|').append(scan.bucketedScan())
            .append('|').append(new TreeMap<>(CollectionConverters.asJava(classic.sessionState().conf().getAllConfs())));
        scala.collection.Iterator<ListingPartition> partitions = scan.selectedPartitions().filePartitionIterator();
        while (partitions.hasNext()) {
            ListingPartition partition = partitions.next();
            key.append("\n").append(partition.values());
            scala.collection.Iterator<FileStatusWithMetadata> files = partition.files();
            while (files.hasNext()) {
                FileStatusWithMetadata file = files.next();
                key.append('|').append(file.getPath()).append(',').append(file.getLen()).append(',')
                    .append(file.getModificationTime());
            }
        }
        return Reused.digest(key);
    }

    /** The tasks of Spark's own read of the files, from its scan's input RDD. */
    private static FileTasks planned(FileSourceScanExec scan) {
        List<List<PartitionedFile>> partitions = new ArrayList<>();
        Set<String> paths = new TreeSet<>();
        for (Partition partition : scan.inputRDD().partitions()) {
            List<PartitionedFile> files = List.of(((FilePartition) partition).files());
            for (PartitionedFile file : files) {
                paths.add(file.filePath().toPath().toString());
            }
            partitions.add(files);
        }
        FileTasks out = new FileTasks();
        out.files = paths.toArray(new String[0]);
        Map<String, Integer> index = new HashMap<>();
        for (int f = 0; f < out.files.length; f++) {
            index.put(out.files[f], f);
        }
        for (List<PartitionedFile> files : partitions) {
            Piece[] pieces = new Piece[files.size()];
            for (int i = 0; i < pieces.length; i++) {
                PartitionedFile file = files.get(i);
                pieces[i] = new Piece(index.get(file.filePath().toPath().toString()), file.start(), file.length());
            }
            out.tasks.add(pieces);
            out.partitioned.add(files.toArray(new PartitionedFile[0]));
        }
        return out;
    }

    /**
     * The tasks of a read of the files a write of {@code slices} partitions wrote (its part files,
     * named {@code part-NNNNN-...} for partition NNNNN, as Spark's writes name them), in {@code
     * plain}'s scan: a task for each partition written, its whole files in name order, none for a
     * partition that wrote no file. The rows are then read in the partitions and order they were
     * written in, as a read of the files is not (Spark packs small files into one task, larger
     * first): {@code createDataFrame}'s data read back from Parquet sums its doubles in its slices'
     * order, to the bits {@code spark.createDataFrame}'s do. Spark's tasks when a file's name does
     * not say its partition.
     */
    static FileTasks ofSlices(Dataset<Row> plain, int slices) {
        FileTasks read = of(plain);
        Map<Integer, PartitionedFile> whole = new HashMap<>();
        for (int t = 0; t < read.tasks.size(); t++) {
            for (int i = 0; i < read.tasks.get(t).length; i++) {
                PartitionedFile piece = read.partitioned.get(t)[i];
                whole.put(read.tasks.get(t)[i].file(), new PartitionedFile(piece.partitionValues(), piece.filePath(),
                    0, piece.fileSize(), piece.locations(), piece.modificationTime(), piece.fileSize(),
                    piece.otherConstantMetadataColumnValues()));
            }
        }
        int[] slice = new int[read.files.length];
        for (int f = 0; f < slice.length; f++) {
            Matcher name = PART.matcher(new Path(read.files[f]).getName());
            slice[f] = name.matches() ? Integer.parseInt(name.group(1)) : -1;
            if (slice[f] < 0 || slice[f] >= slices) {
                return read;
            }
        }
        FileTasks out = new FileTasks();
        out.files = read.files;
        for (int s = 0; s < slices; s++) {
            List<Piece> pieces = new ArrayList<>();
            List<PartitionedFile> partitioned = new ArrayList<>();
            for (int f = 0; f < slice.length; f++) {
                if (slice[f] == s) {
                    pieces.add(new Piece(f, 0, whole.get(f).fileSize()));
                    partitioned.add(whole.get(f));
                }
            }
            out.tasks.add(pieces.toArray(new Piece[0]));
            out.partitioned.add(partitioned.toArray(new PartitionedFile[0]));
        }
        return out;
    }

    /** For each of {@link #files}, its index in {@code paths} (the files a reader of {@code format}
     * was given, by index), which must hold every file Spark's read reads. */
    int[] indexesIn(String[] paths, String format) {
        Map<String, Integer> given = new HashMap<>();
        for (int f = 0; f < paths.length; f++) {
            given.put(new Path(paths[f]).toString(), f);
        }
        int[] out = new int[files.length];
        for (int f = 0; f < files.length; f++) {
            Integer at = given.get(files[f]);
            if (at == null) {
                throw new IllegalStateException("Spark's read of the " + format + " files reads " + files[f]
                    + ", which is not one of them");
            }
            out[f] = at;
        }
        return out;
    }

    /** The bytes of the files read (their pieces' lengths). */
    long bytes() {
        long bytes = 0;
        for (Piece[] task : tasks) {
            for (Piece piece : task) {
                bytes += piece.length();
            }
        }
        return bytes;
    }

    /** The file scan of {@code plain} (its physical plan's one leaf, within AQE's plan if it is one). */
    static FileSourceScanExec scan(Dataset<Row> plain) {
        SparkPlan plan = plain.queryExecution().executedPlan();
        while (true) {
            List<SparkPlan> leaves = CollectionConverters.asJava(plan.collectLeaves());
            SparkPlan leaf = leaves.size() == 1 ? leaves.get(0) : null;
            if (leaf instanceof AdaptiveSparkPlanExec adaptive) {
                plan = adaptive.executedPlan();
            } else if (leaf instanceof FileSourceScanExec scan) {
                return scan;
            } else {
                throw new IllegalStateException("Spark's read of the files is not one file scan: " + plan);
            }
        }
    }
}
