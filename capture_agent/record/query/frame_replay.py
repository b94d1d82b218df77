"""What-if replay of a captured DataFrame output: its analyzed plan run again, each source the
deletion reaches filtering out the deleted rows right where its ids are made.

In the job's process the plan is the frame's own (``capture.frame_io.replayed``); elsewhere (the
server's worker, ``query.stored_job``) it is the plan kept in the run's folder at the action
(``java/lineage/sql/KeptPlan.java``: Java serialization, with stand-ins for the session, the
sources' file listings and Python UDFs' functions, made again for the loading session). Either way
the filter is ``WHERE lineage_keep('<deleted ids>', id)`` above each Project that makes a source's
hidden id column (``java/lineage/sql/Kept.java``), and the aggregates' taps run without writing.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from capture_agent.record.errors import ReplayNotPossible

TAPS_OFF = "lineage.taps.off"  # Tap.OFF: a job's aggregates write no tables (a replay)


def replay_rows(spark: Any, plan: Any, columns: dict[str, str], names: list[str], deleted: dict[str, Any]) -> list[Any]:
    """The rows (Rows of ``names``) of analyzed ``plan`` run without ``deleted`` ({source capture
    id: ids}); ``columns``: the hidden id column each source of the plan makes.

    Raises:
        ReplayNotPossible: a deleted record is not a row of a source the plan reads.
    """
    from pyspark.sql import DataFrame

    filters: dict[str, str] = {}  # hidden column -> deleted ids (base64)
    for source, ids in deleted.items():
        if not ids:
            continue
        if source not in columns:
            raise ReplayNotPossible(f"records of {source} cannot be left out of a DataFrame replay: only rows of "
                                    "the file sources and createDataFrame the frame reads can")
        ids.run_optimize()
        filters[columns[source]] = base64.b64encode(bytes(ids.serialize())).decode("ascii")
    jvm, sc = spark._jvm, spark.sparkContext
    filtered = _filtered(jvm, plan, filters)
    jdf = jvm.org.apache.spark.sql.classic.Dataset.ofRows(spark._jsparkSession, filtered)
    sc.setLocalProperty(TAPS_OFF, "true")  # the aggregates' taps run without writing their tables
    try:
        return list(DataFrame(jdf, spark).select(*[f"`{n}`" for n in names]).collect())
    finally:
        sc.setLocalProperty(TAPS_OFF, None)


def _filtered(jvm: Any, node: Any, filters: dict[str, str]) -> Any:
    """``node`` with a ``lineage_keep`` filter above each Project that makes a hidden column of
    ``filters``."""
    logical = jvm.org.apache.spark.sql.catalyst.plans.logical
    children = node.children()
    if children.size():
        rebuilt = jvm.java.util.ArrayList()
        for i in range(children.size()):
            rebuilt.add(_filtered(jvm, children.apply(i), filters))
        node = node.withNewChildren(jvm.scala.jdk.javaapi.CollectionConverters.asScala(rebuilt).toSeq())
    if node.getClass().getSimpleName() != "Project":
        return node
    made = node.projectList()
    for i in range(made.size()):
        expr = made.apply(i)
        if expr.getClass().getSimpleName() == "Alias" and str(expr.name()) in filters:
            args = jvm.java.util.ArrayList()
            args.add(jvm.org.apache.spark.sql.catalyst.expressions.Literal.create(
                filters[str(expr.name())], jvm.org.apache.spark.sql.types.DataTypes.StringType))
            args.add(expr.toAttribute())
            functions = getattr(getattr(jvm.org.apache.spark.sql.catalyst.analysis, "UnresolvedFunction$"), "MODULE$")
            keep = functions.apply("lineage_keep", jvm.scala.jdk.javaapi.CollectionConverters.asScala(args).toSeq(),
                                   False)
            node = logical.Filter(keep, node)
    return node


# (sc, session, bytes) -> the analyzed plan KeptPlan kept, made for that session: the agent's
# JVM functions are reached through its capture layer, which sets this (``capture.frame_jvm``)
_load_plan: Callable[[Any, Any, bytes], Any] | None = None


def plans_loaded_by(load: Callable[[Any, Any, bytes], Any]) -> None:
    """Sets how kept plans are loaded (``capture.frame_jvm.load_plan``, when it is imported)."""
    global _load_plan
    _load_plan = load


def loaded_plan(sc: Any, spark: Any, data: bytes) -> Any:
    """The analyzed plan ``data`` (``capture.frame_jvm.saved_plan``'s bytes), made for ``spark``."""
    if _load_plan is None:
        raise ReplayNotPossible("kept DataFrame plans are loaded by capture_agent.record.capture, which is not "
                                "imported in this process")
    return _load_plan(sc, spark, data)

