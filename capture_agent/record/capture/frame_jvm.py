"""The agent's JVM functions for captured DataFrames (``java/lineage/sql``), registered with the
session: the id-set functions once (``IdSets``: lineage_ids, lineage_union, lineage_set,
lineage_or, lineage_union_all, lineage_set_all, lineage_keep) and the planning strategy that reads
a scan's ``_metadata`` flat (``FlatMetadata``), and the readers of
text lines (``Lines``), of CSV and JSON Lines rows (``Csv``, ``Json``: ``ParsedLines``) and of
ORC and Parquet rows (``Orc``, ``Parquet``) with their ids."""

from __future__ import annotations

import json
import weakref
from typing import Any

from capture_agent.record.errors import LineageError
from capture_agent.record.query.frame_replay import plans_loaded_by

ID_SETS_CLASS = "lineage.sql.IdSets"
FLAT_METADATA_CLASS = "lineage.sql.FlatMetadata"


PLAN = "org.apache.spark.sql.catalyst.plans.logical.LogicalPlan"

def functions_registered(lc: Any) -> None:
    """Registers the JVM id-set functions (``lineage.sql.IdSets``) with the session, once, ships
    the jar to the executors, and plans file scans with ``_metadata`` read flat
    (``lineage.sql.FlatMetadata``: a source's ids without a struct of boxed longs a row)."""
    from capture_agent.listener import ensure_jar

    spark = lc.spark
    registered = spark.__dict__.setdefault("_lineage_id_sets", False)
    if registered:
        return
    jar = ensure_jar(lc.settings)
    if jar is None:
        raise LineageError("DataFrame capture needs the agent's jar: run python -m capture_agent.build_jar "
                           "(a JDK's javac builds it)")
    instance = _new(lc, ID_SETS_CLASS)
    lc.sc._jsc.sc().addJar(str(jar))
    instance.register(spark._jsparkSession)
    _new(lc, FLAT_METADATA_CLASS).install(spark._jsparkSession)
    spark.__dict__["_lineage_id_sets"] = True


def _new(lc: Any, name: str, *args: tuple[Any, Any]) -> Any:
    """A new object of the jar's class ``name`` (its own class loader: reflection), made by the
    constructor of ``args``' JVM classes, given as (class name, value) pairs."""
    from capture_agent.listener import ensure_jar, jvm_class

    sc, gateway = lc.sc, lc.sc._gateway
    jar = ensure_jar(lc.settings)
    assert jar is not None
    made: dict[tuple[Any, ...], Any] = gateway.__dict__.setdefault("_lineage_constructors", {})
    key = (str(jar.resolve()), name, *[cls for cls, _ in args])
    if key not in made:  # each py4j call is a round trip: a query's captured steps make a few of these
        types = gateway.new_array(sc._jvm.java.lang.Class, len(args))
        for i, (cls, _) in enumerate(args):
            types[i] = _java_class(sc, cls)
        made[key] = jvm_class(sc, jar, name).getDeclaredConstructor(types)
    values = gateway.new_array(jvm_type(sc, "java.lang.Object"), len(args))
    for i, (_, value) in enumerate(args):
        values[i] = value
    return made[key].newInstance(values)


def static_call(lc: Any, class_name: str, method: str, *args: tuple[str, Any]) -> Any:
    """The static ``method`` of the jar's class ``class_name`` (its own class loader: reflection,
    the method found once a gateway) called with ``args``, given as (JVM class name, value) pairs."""
    from capture_agent.listener import ensure_jar, jvm_class

    sc, gateway = lc.sc, lc.sc._gateway
    jar = ensure_jar(lc.settings)
    if jar is None:
        raise RuntimeError("the agent's jar is missing")
    found: dict[tuple[Any, ...], Any] = gateway.__dict__.setdefault("_lineage_constructors", {})
    key = (str(jar.resolve()), class_name, method, *[cls for cls, _ in args])
    if key not in found:
        types = gateway.new_array(sc._jvm.java.lang.Class, len(args))
        for i, (cls, _) in enumerate(args):
            types[i] = _java_class(sc, cls)
        found[key] = jvm_class(sc, jar, class_name).getMethod(method, types)
    values = gateway.new_array(jvm_type(sc, "java.lang.Object"), len(args))
    for i, (_, value) in enumerate(args):
        values[i] = value
    return found[key].invoke(None, values)


def leaf_identities(lc: Any, df: Any) -> list[str]:
    """The identities of what the leaves of ``df``'s plan read (``provenance.LeafIdentity``)."""
    plan = df._jdf.queryExecution().analyzed()
    return [str(i) for i in static_call(lc, "lineage.sql.provenance.LeafIdentity", "inPlan", (PLAN, plan))]


def as_python(lc: Any, value: Any) -> Any:
    """A JVM map, list or array of strings, booleans and numbers (nested too) as Python's dict or
    list, in one round trip: Jackson (Spark's own) writes it as JSON. Iterated through py4j it
    costs a call an element (a source's description, a map of about twenty entries, took some
    ninety calls)."""
    gateway = lc.sc._gateway
    mapper = _JSON_WRITERS.get(gateway)
    if mapper is None:
        mapper = _JSON_WRITERS[gateway] = lc.sc._jvm.com.fasterxml.jackson.databind.ObjectMapper()
    return json.loads(str(mapper.writeValueAsString(value)))


# Jackson's writer in each JVM (by its py4j gateway): made once, it is safe to share between threads
_JSON_WRITERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def jvm_type(sc: Any, fqn: str) -> Any:
    """py4j's handle of the JVM class ``fqn`` (for ``new_array``, a static call), made here: going
    down ``sc._jvm.java.lang.Object`` asks the JVM about each name, a round trip each."""
    from py4j.java_gateway import JavaClass  # type: ignore[import-untyped]

    return JavaClass(fqn, sc._gateway._gateway_client)


def static_method(sc: Any, fqn: str, name: str) -> Any:
    """The static method ``name`` of the JVM class ``fqn`` (looked up once a gateway: a call of it
    is then one round trip)."""
    found = _STATIC_METHODS.setdefault(sc._gateway, {})
    if (fqn, name) not in found:
        found[(fqn, name)] = getattr(jvm_type(sc, fqn), name)
    return found[(fqn, name)]


def java_strings(sc: Any, items: list[str]) -> Any:
    """A Java String[] of ``items``, in one round trip (a regex split of them joined in the JVM;
    setting an array's elements from here is a round trip each)."""
    gateway = sc._gateway
    if not items or any("\n" in item for item in items):
        array = gateway.new_array(jvm_type(sc, "java.lang.String"), len(items))
        for i, item in enumerate(items):
            array[i] = item
        return array
    splitter = _SPLITTERS.get(gateway)
    if splitter is None:
        splitter = _SPLITTERS[gateway] = static_method(sc, "java.util.regex.Pattern", "compile")("\n")
    return splitter.split("\n".join(items), -1)  # -1: empty items kept


# a compiled regex of a newline in each JVM (by py4j gateway)
_SPLITTERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
# static methods looked up, by py4j gateway
_STATIC_METHODS: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], Any]] = weakref.WeakKeyDictionary()


def _java_class(sc: Any, name: str) -> Any:
    """The JVM's class of ``name`` (a primitive type by its name: int, long, boolean)."""
    boxes = {"int": "Integer", "long": "Long", "boolean": "Boolean"}
    lang = sc._jvm.java.lang
    return getattr(lang, boxes[name]).TYPE if name in boxes else lang.Class.forName(name)


LINES_CLASS = "lineage.sql.Lines"


def lines_frame(lc: Any, plain: Any, skip_blank: bool, header: bool) -> tuple[Any, list[str]]:
    """A DataFrame (id, value) of the lines of the files ``plain`` (Spark's read of them) reads,
    read in the JVM (``java/lineage/sql/Lines.java``) in ``plain``'s tasks, and the files by index
    (as Hadoop's Path spells them): id (file index, byte offset). How the lines were read is kept
    with the rows, so that an output's kept plan reads them again elsewhere (``KeptPlan``)."""
    from pyspark.sql import DataFrame

    functions_registered(lc)  # the jar is there, and on the executors
    lines = _new(lc, LINES_CLASS)
    df = DataFrame(lines.frame(lc.spark._jsparkSession, plain._jdf, skip_blank, header), lc.spark)
    return df, [str(path) for path in lines.files()]


CSV_CLASS = "lineage.sql.Csv"


def csv_frame(lc: Any, plain: Any, schema: Any, id_name: str, options: dict[str, str],
              location: str) -> tuple[Any, list[str]]:
    """A DataFrame of the rows of the CSV files ``plain`` (Spark's read of them as text) reads, with
    ``schema``'s columns (a Java StructType: Spark's schema of the CSV read) and the lines' ids in
    column ``id_name``, last (made by a Project of its own right above the read, where what-if
    replays filter: ``FileRowsTable.frame``), parsed in the JVM by Spark's own CSV parser with
    ``options`` (header, sep, quote) in ``plain``'s tasks (``java/lineage/sql/Csv.java``), and the
    files by index (as Hadoop's Path spells them): id (file index, byte offset). ``location``: the
    paths read."""
    jmap = lc.sc._jvm.java.util.HashMap()
    for key, value in options.items():
        jmap.put(key, value)
    return _parsed_lines(lc, CSV_CLASS, plain._jdf, schema, id_name, jmap, location)


JSON_CLASS = "lineage.sql.Json"


def json_frame(lc: Any, plain: Any, schema: Any, id_name: str, location: str) -> tuple[Any, list[str]]:
    """A DataFrame of the rows of the JSON Lines files ``plain`` (Spark's read of them as text)
    reads, with ``schema``'s columns (a Java StructType: Spark's schema of the JSON read) and the
    lines' ids in column ``id_name``, last (as ``csv_frame``'s), parsed in the JVM by Spark's own
    JSON parser in ``plain``'s tasks (``java/lineage/sql/Json.java``: the rows Spark's reader makes
    of a line, each of an array's objects too), and the files by index (as Hadoop's Path spells
    them). ``location``: the paths read."""
    return _parsed_lines(lc, JSON_CLASS, plain._jdf, schema, id_name, location)


def _parsed_lines(lc: Any, class_name: str, *args: Any) -> tuple[Any, list[str]]:
    """The DataFrame ``frame(session, *args)`` of a new ``class_name`` (a ``ParsedLines``: Csv,
    Json) makes, and its files by index."""
    from pyspark.sql import DataFrame

    functions_registered(lc)
    reader = _new(lc, class_name)
    df = DataFrame(reader.frame(lc.spark._jsparkSession, *args), lc.spark)
    return df, [str(path) for path in reader.files()]


ROWS_CLASSES = {"orc": "lineage.sql.Orc", "parquet": "lineage.sql.Parquet"}


def rows_frame(lc: Any, fmt: str, plain: Any, paths: list[str], id_name: str, name: str,
               location: str | None, slices: int = 0) -> Any:
    """A DataFrame of the rows of ``fmt``'s files (orc, parquet; ``paths``, in file-index order)
    with the columns of ``plain`` (Spark's read of them) and the rows' ids in column ``id_name``,
    last (as ``csv_frame``'s), read in the JVM (``java/lineage/sql/Orc.java``, ``Parquet.java``)
    in the tasks of ``plain``'s scan, the same rows in the same order: id (file index, row
    number). ``name``: the table's (a catalog table's, or the folders'); ``location``: the folders
    read, by commas (None for a catalog table), which the coarse listener records as reads of
    ``fmt``. ``slices`` (Parquet): the files are a write's of that many partitions, read in those
    partitions instead (``FileTasks.ofSlices``)."""
    from pyspark.sql import DataFrame

    functions_registered(lc)  # the jar is there, and on the executors
    files = java_strings(lc.sc, paths)
    reader = _new(lc, ROWS_CLASSES[fmt])
    args = [lc.spark._jsparkSession, plain._jdf, files, plain._jdf.schema(), id_name, name, location]
    return DataFrame(reader.frame(*args, slices) if slices else reader.frame(*args), lc.spark)


def parquet_unread(lc: Any, plain: Any) -> str | None:
    """Why the agent's Parquet reader (``java/lineage/sql/Parquet.java``) cannot read the rows
    ``plain`` (Spark's read of Parquet files) reads, or None when it can."""
    functions_registered(lc)
    return _new(lc, ROWS_CLASSES["parquet"]).unread(lc.spark._jsparkSession, plain._jdf)


KEPT_PLAN_CLASS = "lineage.sql.KeptPlan"


def saved_plan(lc: Any, plan: Any) -> bytes:
    """``plan`` (an analyzed LogicalPlan of ``lc``'s session) as ``KeptPlan``'s bytes
    (``java/lineage/sql/KeptPlan.java``).

    Raises:
        py4j's Py4JJavaError: a part of the plan cannot be kept (java.io.NotSerializableException
            says which).
    """
    return bytes(_new(lc, KEPT_PLAN_CLASS).save(plan))


def not_kept_reason(exc: Exception) -> str:
    """Why a plan could not be kept, from what ``saved_plan`` raised."""
    text = str(exc)
    marker = "java.io.NotSerializableException: "
    if marker in text:
        what = text.split(marker, 1)[1].splitlines()[0].strip()
        return f"the query reads {what}, which a replay outside the job's process cannot make again"
    return f"the query's plan cannot be kept ({type(exc).__name__}: {text.splitlines()[0] if text else ''})"


def load_plan(sc: Any, spark: Any, data: bytes) -> Any:
    """The analyzed plan ``saved_plan`` kept, made for ``spark`` (its file listings, Hadoop
    settings and Python UDFs this process's: UDFs run by ``sc``'s Python), with the id-set
    functions registered (a replay's filters call lineage_keep)."""
    from types import SimpleNamespace

    from capture_agent.config import load_settings

    context = SimpleNamespace(sc=sc, spark=spark, settings=load_settings({}))
    functions_registered(context)
    return _new(context, KEPT_PLAN_CLASS).load(spark._jsparkSession, data, sc._javaAccumulator, sc.pythonExec)


plans_loaded_by(load_plan)
