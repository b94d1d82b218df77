package lineage.sql;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InvalidClassException;
import java.io.NotSerializableException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.OutputStream;
import java.io.Serializable;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.hadoop.fs.Path;
import org.apache.spark.api.python.SimplePythonFunction;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex;
import org.apache.spark.sql.execution.datasources.NoopCache$;
import org.apache.spark.sql.execution.datasources.PartitionSpec;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.util.CollectionAccumulator;
import org.apache.spark.util.SerializableConfiguration;

import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A captured DataFrame output's analyzed plan kept as bytes in the run's folder, so that a what-if
 * asked elsewhere (the server's worker, another process) replays the query as the job's own process
 * does ({@code capture/frame_io.replayed}). Catalyst plans are Java-serializable but for what ties them
 * to the process that made them; those parts are written as stand-ins and made again, on loading,
 * for the session given:
 *
 * <ul>
 *   <li>a SparkSession: the loading session;
 *   <li>a file source's index of files ({@link InMemoryFileIndex}): its root paths, options and
 *       given partitioning, listed again where it is loaded (the replay checks the files did not
 *       change);
 *   <li>a data source V2 relation of a table of no catalog (the agent's ORC reader, whose table
 *       is serializable): its table, output and options, the relation made again (its class cannot
 *       be read back by Java serialization);
 *   <li>the rows of the agent's text, CSV and JSON reader ({@link Lines}): the files read again,
 *       in the same tasks (the replay checks first that the files did not change);
 *   <li>a Hadoop configuration (of the agent's ORC reader): the loading context's, so that no
 *       setting of the job's (credentials...) is written to the folder;
 *   <li>a data source's options ({@link CaseInsensitiveStringMap}): as they were;
 *   <li>a Python UDF's function ({@link SimplePythonFunction}): its pickled command, environment and
 *       Python version, run by the loading context's Python and accumulator (a UDF whose command was
 *       broadcast, over 1 MB pickled, is not kept).
 * </ul>
 *
 * No option, property or Python environment variable whose name Spark would redact in its logs
 * (keys, secrets, passwords, tokens: {@link #SECRET}) is written, in any of Scala's maps or the
 * stand-ins: the loading process has such credentials of its own, or not at all.
 *
 * Another RDD's rows (an RDD made a DataFrame), serializable but computed only by its own
 * SparkContext, and anything else that is not serializable (another kind
 * of file index...) make {@link #save} fail, saying what: that output is not kept and a replay of
 * it elsewhere says why. Classes load through this jar's class loader, whose parent is Spark's; a
 * class outside Spark's, Scala's, the JDK's values and collections, Hadoop's paths and this jar's
 * is refused while the bytes are read ({@link #ALLOWED}): the loading process (the server's
 * worker) is not handed arbitrary classes to make by whoever could write the run's folder.
 */
public final class KeptPlan {
    /** The plan's bytes. */
    public byte[] save(LogicalPlan plan) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (Out out = new Out(bytes)) {
            out.writeObject(plan);
        }
        return bytes.toByteArray();
    }

    /** The plan {@link #save} wrote, its stand-ins made for {@code spark}: Python UDFs run by
     * {@code pythonExec}, reporting to {@code accumulator} (PySpark's context's own). */
    public LogicalPlan load(SparkSession spark, byte[] data, CollectionAccumulator<byte[]> accumulator,
                                   String pythonExec) throws IOException, ClassNotFoundException {
        try (In in = new In(new ByteArrayInputStream(data), new Here(spark, accumulator, pythonExec))) {
            try {
                return (LogicalPlan) in.readObject();
            } catch (InvalidClassException e) {
                throw in.rejected == null ? e : new InvalidClassException(in.rejected, "a kept plan may not hold it");
            }
        }
    }

    /** What stand-ins are made for. */
    private record Here(SparkSession spark, CollectionAccumulator<byte[]> accumulator, String pythonExec) {
    }

    private interface StandIn extends Serializable {
        Object made(Here here) throws IOException;
    }

    private static final class Session implements StandIn {
        private static final long serialVersionUID = 1L;

        @Override
        public Object made(Here here) {
            return here.spark();
        }
    }

    private static final class Files implements StandIn {
        private static final long serialVersionUID = 1L;
        private final String[] roots;
        private final HashMap<String, String> options;
        private final PartitionSpec partitions;  // given by the reader, or null

        Files(InMemoryFileIndex index) throws IOException {
            List<String> paths = new ArrayList<>();
            for (Path root : CollectionConverters.asJava(index.rootPaths())) {
                paths.add(root.toString());
            }
            roots = paths.toArray(new String[0]);
            scala.collection.immutable.Map<String, String> given = field(index, "parameters");
            options = unsecret(CollectionConverters.asJava(given));
            Option<PartitionSpec> spec = field(index, "userSpecifiedPartitionSpec");
            partitions = spec.isDefined() ? spec.get() : null;
        }

        @Override
        public Object made(Here here) {
            List<Path> paths = new ArrayList<>();
            for (String root : roots) {
                paths.add(new Path(root));
            }
            return new InMemoryFileIndex(here.spark(), CollectionConverters.asScala(paths).toList(),
                    immutable(options), Option.empty(),
                    NoopCache$.MODULE$, Option.apply(partitions), Option.empty());
        }
    }

    private static final class Python implements StandIn {
        private static final long serialVersionUID = 1L;
        private final byte[] command;
        private final HashMap<String, String> env;
        private final ArrayList<String> includes;
        private final String version;

        Python(SimplePythonFunction function) throws NotSerializableException {
            if (!function.broadcastVars().isEmpty()) {
                throw new NotSerializableException("a Python function shipped as a broadcast (over 1 MB pickled)");
            }
            List<Object> bytes = CollectionConverters.asJava(function.command());
            command = new byte[bytes.size()];
            for (int i = 0; i < command.length; i++) {
                command[i] = (Byte) bytes.get(i);
            }
            env = unsecret(function.envVars());
            includes = new ArrayList<>(function.pythonIncludes());
            version = function.pythonVer();
        }

        @Override
        public Object made(Here here) {
            List<Object> bytes = new ArrayList<>(command.length);
            for (byte b : command) {
                bytes.add(b);
            }
            return new SimplePythonFunction(CollectionConverters.asScala(bytes).toList(), env, includes,
                    here.pythonExec(), version, new ArrayList<>(), here.accumulator());
        }
    }

    private static final class V2 implements StandIn {
        private static final long serialVersionUID = 1L;
        private final Object table;
        private final Object output;
        private final Object options;

        V2(DataSourceV2Relation relation) throws NotSerializableException {
            if (relation.catalog().isDefined() || relation.timeTravelSpec().isDefined()
                    || !(relation.table() instanceof Serializable)) {
                throw new NotSerializableException("the table " + relation.table().name() + " ("
                        + relation.table().getClass().getName() + ")");
            }
            table = relation.table();
            output = relation.output();
            options = relation.options();
        }

        @Override
        @SuppressWarnings("unchecked")
        public Object made(Here here) {
            return new DataSourceV2Relation((Table) table, (scala.collection.immutable.Seq<AttributeReference>) output,
                    Option.empty(), Option.empty(), (CaseInsensitiveStringMap) options, Option.empty());
        }
    }

    private static final class LineRows implements StandIn {
        private static final long serialVersionUID = 1L;
        private final Lines.Read read;

        LineRows(Lines.Read read) {
            this.read = read;
        }

        @Override
        public Object made(Here here) throws IOException {
            return read.rows(here.spark().sparkContext());
        }
    }

    private static final class Conf implements StandIn {
        private static final long serialVersionUID = 1L;

        @Override
        public Object made(Here here) {
            return new SerializableConfiguration(here.spark().sparkContext().hadoopConfiguration());
        }
    }

    private static final class Options implements StandIn {
        private static final long serialVersionUID = 1L;
        private final HashMap<String, String> options;

        Options(CaseInsensitiveStringMap map) {
            options = unsecret(map.asCaseSensitiveMap());
        }

        @Override
        public Object made(Here here) {
            return new CaseInsensitiveStringMap(options);
        }
    }

    /** Options whose names Spark would redact in its logs (keys, secrets, passwords, tokens). */
    private static final Pattern SECRET = Pattern.compile("(?i)secret|password|token|access[.]?key|credential");

    /** {@code options} without the secrets, which the loading process has of its own or not at all. */
    private static HashMap<String, String> unsecret(Map<String, String> options) {
        HashMap<String, String> kept = new HashMap<>();
        options.forEach((name, value) -> {
            if (!SECRET.matcher(name).find()) {
                kept.put(name, value);
            }
        });
        return kept;
    }

    /** A Scala map (a relation's options, a table's properties) without the entries of secret
     * names; {@code map} itself when it has none. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object withoutSecrets(scala.collection.immutable.Map<?, ?> map) {
        Map<Object, Object> kept = new HashMap<>();
        boolean secret = false;
        for (Map.Entry<?, ?> entry : CollectionConverters.asJava(map).entrySet()) {
            if (entry.getKey() instanceof String name && SECRET.matcher(name).find()) {
                secret = true;
            } else {
                kept.put(entry.getKey(), entry.getValue());
            }
        }
        return secret ? scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(kept)) : map;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static scala.collection.immutable.Map<String, String> immutable(Map<String, String> map) {
        return (scala.collection.immutable.Map<String, String>) (scala.collection.immutable.Map)
                scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(map));
    }

    @SuppressWarnings("unchecked")
    private static <T> T field(Object owner, String name) throws IOException {
        try {
            Field f = owner.getClass().getDeclaredField(name);
            f.setAccessible(true);
            return (T) f.get(owner);
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new NotSerializableException(owner.getClass().getName() + " (its " + name + " is not readable: "
                    + e + ")");
        }
    }

    /** Packages whose classes a kept plan may hold: Spark's, Scala's, the JDK's values and
     * collections, Hadoop's paths, this jar's. Any other class is refused before it is made. */
    private static final List<String> ALLOWED = List.of("org.apache.spark.", "scala.", "java.lang.", "java.util.",
            "java.math.", "java.time.", "java.net.URI", "org.apache.hadoop.fs.Path", "lineage.sql.");

    private static ObjectInputFilter.Status allowed(ObjectInputFilter.FilterInfo info) {
        Class<?> c = info.serialClass();
        while (c != null && c.isArray()) {
            c = c.getComponentType();
        }
        if (c == null || c.isPrimitive()) {
            return ObjectInputFilter.Status.UNDECIDED;
        }
        String name = c.getName();
        for (String prefix : ALLOWED) {
            if (name.startsWith(prefix)) {
                return ObjectInputFilter.Status.ALLOWED;
            }
        }
        return ObjectInputFilter.Status.REJECTED;
    }

    private static final class Out extends ObjectOutputStream {
        Out(OutputStream out) throws IOException {
            super(out);
            enableReplaceObject(true);
        }

        @Override
        protected Object replaceObject(Object obj) throws IOException {
            if (obj instanceof SparkSession) {
                return new Session();
            }
            if (obj instanceof RDD && Lines.readOf((RDD<?>) obj) != null) {
                return new LineRows(Lines.readOf((RDD<?>) obj));
            }
            if (obj instanceof RDD) {  // serializable, but its rows come from its own SparkContext only
                throw new NotSerializableException("the rows of an RDD (an RDD made a DataFrame)");
            }
            if (obj != null && obj.getClass() == InMemoryFileIndex.class) {
                return new Files((InMemoryFileIndex) obj);
            }
            if (obj != null && obj.getClass() == DataSourceV2Relation.class) {
                return new V2((DataSourceV2Relation) obj);
            }
            if (obj instanceof SerializableConfiguration) {
                return new Conf();
            }
            if (obj instanceof scala.collection.immutable.Map<?, ?> map
                    && obj.getClass().getName().startsWith("scala.collection.immutable.")) {
                return withoutSecrets(map);
            }
            if (obj instanceof CaseInsensitiveStringMap) {
                return new Options((CaseInsensitiveStringMap) obj);
            }
            if (obj != null && obj.getClass() == SimplePythonFunction.class) {
                return new Python((SimplePythonFunction) obj);
            }
            return obj;
        }
    }

    private static final class In extends ObjectInputStream {
        private final Here here;
        private String rejected;
        private final Map<String, Class<?>> primitives = Map.of("boolean", boolean.class, "byte", byte.class,
                "char", char.class, "short", short.class, "int", int.class, "long", long.class, "float",
                float.class, "double", double.class, "void", void.class);

        In(InputStream in, Here here) throws IOException {
            super(in);
            this.here = here;
            enableResolveObject(true);
            setObjectInputFilter(info -> {
                ObjectInputFilter.Status status = allowed(info);
                if (status == ObjectInputFilter.Status.REJECTED) {
                    rejected = info.serialClass().getName();
                }
                return status;
            });
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws ClassNotFoundException {
            Class<?> primitive = primitives.get(desc.getName());
            if (primitive != null) {
                return primitive;
            }
            return Class.forName(desc.getName(), false, KeptPlan.class.getClassLoader());
        }

        @Override
        protected Object resolveObject(Object obj) throws IOException {
            return obj instanceof StandIn ? ((StandIn) obj).made(here) : obj;
        }
    }
}
