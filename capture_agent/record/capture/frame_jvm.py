"""The agent's JVM functions for captured DataFrames (``java/lineage/sql``), registered with the
session: the id-set functions once (``IdSets``: lineage_ids, lineage_union, lineage_set,
lineage_or, lineage_keep), one ``lineage_tap_<n>`` per captured aggregate (``Tap``), and the
reader of text lines with their ids (``Lines``)."""

from __future__ import annotations

from typing import Any

from capture_agent.record.errors import LineageError

ID_SETS_CLASS = "lineage.sql.IdSets"


def functions_registered(lc: Any) -> None:
    """Registers the JVM id-set functions (``lineage.sql.IdSets``) with the session, once, and
    ships the jar to the executors."""
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
    spark.__dict__["_lineage_id_sets"] = True


def _new(lc: Any, name: str, *args: tuple[Any, Any]) -> Any:
    """A new object of the jar's class ``name`` (its own class loader: reflection), made by the
    constructor of ``args``' JVM classes, given as (class, value) pairs."""
    from capture_agent.listener import ensure_jar, jvm_class

    sc, gateway = lc.sc, lc.sc._gateway
    jar = ensure_jar(lc.settings)
    assert jar is not None
    types = gateway.new_array(sc._jvm.java.lang.Class, len(args))
    values = gateway.new_array(sc._jvm.java.lang.Object, len(args))
    for i, (cls, value) in enumerate(args):
        types[i], values[i] = cls, value
    return jvm_class(sc, jar, name).getDeclaredConstructor(types).newInstance(values)


TAP_CLASS = "lineage.sql.Tap"


def tap_function(lc: Any, location: str, sources: int) -> str:
    """A new SQL function ``lineage_tap_<n>(group, id...)`` over ``sources`` id columns (1 to 3)
    that writes a ``frame_groups`` table per task under ``location`` (``java/lineage/sql/Tap.java``)."""
    functions_registered(lc)  # the jar is there
    jvm = lc.sc._jvm
    tap = _new(lc, TAP_CLASS, (jvm.java.lang.Class.forName("java.lang.String"), lc.store.fs.uri(location)),
               (jvm.java.lang.Integer.TYPE, sources))
    name = f"lineage_tap_{lc.frames.next_tap()}"
    lc.spark._jsparkSession.udf().register(name, tap.function(), jvm.org.apache.spark.sql.types.DataTypes.LongType)
    return name


LINES_CLASS = "lineage.sql.Lines"


def lines_frame(lc: Any, raw: Any, file_of: list[int], file_start: list[bool], skip_blank: bool,
                header: bool) -> Any:
    """A DataFrame (id, value) of the lines of a HadoopRDD of TextInputFormat, read in the JVM
    (``java/lineage/sql/Lines.java``): id (file index ``file_of[partition]``, byte offset)."""
    from pyspark.sql import DataFrame

    functions_registered(lc)  # the jar is there, and on the executors
    gateway = lc.sc._gateway
    lines = _new(lc, LINES_CLASS)
    files = gateway.new_array(gateway.jvm.int, len(file_of))
    starts = gateway.new_array(gateway.jvm.boolean, len(file_start))
    for p, (index, start) in enumerate(zip(file_of, file_start, strict=True)):
        files[p], starts[p] = index, start
    return DataFrame(lines.frame(lc.spark._jsparkSession, raw, files, starts, skip_blank, header), lc.spark)
