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
    from capture_agent.listener import ensure_jar, jvm_class

    spark = lc.spark
    registered = spark.__dict__.setdefault("_lineage_id_sets", False)
    if registered:
        return
    jar = ensure_jar(lc.settings)
    if jar is None:
        raise LineageError("DataFrame capture needs the agent's jar: run python -m capture_agent.build_jar "
                           "(a JDK's javac builds it)")
    sc, gateway = lc.sc, lc.sc._gateway
    cls = jvm_class(sc, jar, ID_SETS_CLASS)
    instance = cls.getDeclaredConstructor(gateway.new_array(sc._jvm.java.lang.Class, 0)) \
        .newInstance(gateway.new_array(sc._jvm.java.lang.Object, 0))
    sc._jsc.sc().addJar(str(jar))
    instance.register(spark._jsparkSession)
    spark.__dict__["_lineage_id_sets"] = True


TAP_CLASS = "lineage.sql.Tap"


def tap_function(lc: Any, location: str, sources: int) -> str:
    """A new SQL function ``lineage_tap_<n>(group, id...)`` over ``sources`` id columns (1 to 3)
    that writes a ``frame_groups`` table per task under ``location`` (``java/lineage/sql/Tap.java``)."""
    from capture_agent.listener import ensure_jar, jvm_class

    functions_registered(lc)  # the jar is there
    sc, gateway = lc.sc, lc.sc._gateway
    jar = ensure_jar(lc.settings)
    assert jar is not None
    cls = jvm_class(sc, jar, TAP_CLASS)
    types = gateway.new_array(sc._jvm.java.lang.Class, 2)
    types[0], types[1] = sc._jvm.java.lang.Class.forName("java.lang.String"), sc._jvm.java.lang.Integer.TYPE
    args = gateway.new_array(sc._jvm.java.lang.Object, 2)
    args[0], args[1] = lc.store.fs.uri(location), sources
    tap = cls.getConstructor(types).newInstance(args)
    name = f"lineage_tap_{lc.frames.next_tap()}"
    lc.spark._jsparkSession.udf().register(name, tap.function(), sc._jvm.org.apache.spark.sql.types.DataTypes.LongType)
    return name


LINES_CLASS = "lineage.sql.Lines"


def lines_frame(lc: Any, raw: Any, file_of: list[int], file_start: list[bool], skip_blank: bool,
                header: bool) -> Any:
    """A DataFrame (id, value) of the lines of a HadoopRDD of TextInputFormat, read in the JVM
    (``java/lineage/sql/Lines.java``): id (file index ``file_of[partition]``, byte offset)."""
    from pyspark.sql import DataFrame

    from capture_agent.listener import ensure_jar, jvm_class

    functions_registered(lc)  # the jar is there, and on the executors
    sc, gateway = lc.sc, lc.sc._gateway
    jar = ensure_jar(lc.settings)
    assert jar is not None
    lines = jvm_class(sc, jar, LINES_CLASS).getDeclaredConstructor(gateway.new_array(sc._jvm.java.lang.Class, 0)) \
        .newInstance(gateway.new_array(sc._jvm.java.lang.Object, 0))
    files = gateway.new_array(sc._jvm.int, len(file_of))
    starts = gateway.new_array(sc._jvm.boolean, len(file_start))
    for p, (index, start) in enumerate(zip(file_of, file_start, strict=True)):
        files[p], starts[p] = index, start
    return DataFrame(lines.frame(lc.spark._jsparkSession, raw, files, starts, skip_blank, header), lc.spark)
