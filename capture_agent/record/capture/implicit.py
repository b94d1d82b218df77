"""Record capture switched on by configuration: every DataFrame action of the job, unmodified.

    capture_agent.enable(spark, records=True)     # or LINEAGE_ENABLED=true LINEAGE_RECORDS=true

Once on for a SparkContext, each action of any DataFrame of its sessions (``collect``, ``count``, ``show``,
``take``, ``head``, ``first``, ``toPandas``, and ``write``'s ``save``, ``parquet``, ``csv``,
``json``, ``orc``, ``text``, ``saveAsTable``), however the frame was made (``spark.read``,
``spark.table``, ``spark.sql``, ``createDataFrame``, views), runs its query rewritten in the JVM
to carry each row's lineage (``capture.frame_plan``) and writes its output point, as the explicit
``LineageContext`` does (``capture.frame_io``): the same rows, traceable and what-if-able. The
context is implicit: ``records_context(spark)`` gives it, for ``getLineage``-style use in a notebook.

RDD jobs too: the SparkContext's ``textFile``, ``parallelize`` and ``range``, and a DataFrame's
``.rdd``, give captured RDDs whose jobs capture as ``lc.textFile(...)``'s do
(``capture.implicit_rdd``).

The job never fails because of this: a query the rewrite refuses runs exactly as plain PySpark
would and is recorded as not captured with the operator that stopped it (``LineageStore.
not_captured``, in the run's ``run.json``, registered with the server as an output point whose
``not_captured`` says why, and logged); a capture that fails while it runs is
recorded so too and the action runs plain. The agent's own queries, made while it captures, are
never captured (a per-thread guard).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from capture_agent.record.capture.captured_frames import run_or_plain
from capture_agent.record.capture.implicit_guard import (
    CONTEXT,
    active_context,
    from_user_code,
    records_context,
    report_plain,
    uncaptured,
    why_plain,
)
from capture_agent.record.query.call_site import CallSite, user_call_site

log = logging.getLogger("capture_agent")

ACTIONS = ("collect", "count", "take", "head", "first", "toPandas", "show")
WRITES = ("save", "parquet", "csv", "json", "orc", "text", "saveAsTable")
WRITER_SETTINGS = ("mode", "format", "option", "options", "partitionBy")
READS = ("load", "json", "csv", "parquet", "orc", "text", "table")  # named by the user's line, not captured

_installed = False
_install_lock = threading.Lock()


def enable_records(spark_or_sc: Any, store: str | None = None) -> Any:
    """Captures every DataFrame action of ``spark_or_sc``'s SparkContext from now on (idempotent).

    Returns:
        The implicit LineageContext.
    """
    from capture_agent.record import LineageContext
    from capture_agent.record.capture.implicit_rdd import ImplicitRDD

    sc = getattr(spark_or_sc, "sparkContext", spark_or_sc)
    lc = sc.__dict__.get(CONTEXT)
    if lc is None:
        lc = LineageContext(spark_or_sc, store)
        lc.rdd_type = ImplicitRDD
        sc.__dict__[CONTEXT] = lc
    _install()
    return lc


def disable_records(spark_or_sc: Any) -> None:
    """Stops capturing ``spark_or_sc``'s actions (its actions run plain from now on)."""
    sc = getattr(spark_or_sc, "sparkContext", spark_or_sc)
    sc.__dict__.pop(CONTEXT, None)


def last_lineage(spark_or_sc: Any) -> Any:
    """A LineageRDD at the output of the last captured action of ``spark_or_sc``'s session.

    Raises:
        NotCaptured: records are off, or no action was captured yet.
    """
    from capture_agent.record.errors import NotCaptured

    lc = records_context(spark_or_sc)
    outputs = [] if lc is None else [p for p in lc.store.by_seq() if p.kind == "output"]
    if not outputs:
        raise NotCaptured("no captured action yet: enable(spark, records=True), then collect, count, write...")
    return lc.lineage(outputs[-1].capture_id)


def _context_of(df: Any) -> Any:
    if not from_user_code():
        return None
    try:
        sc = df.sparkSession.sparkContext
    except Exception:  # noqa: BLE001 - a frame of no classic session (Spark Connect): plain
        return None
    return active_context(sc)


def _install() -> None:
    """Wraps the actions of PySpark's DataFrame and DataFrameWriter classes, once a process."""
    global _installed
    with _install_lock:
        if _installed:
            return
        from pyspark.sql.classic.dataframe import DataFrame
        from pyspark.sql.readwriter import DataFrameReader, DataFrameWriter

        from capture_agent.record.capture import implicit_rdd

        for name in ACTIONS:
            setattr(DataFrame, name, _action(name, getattr(DataFrame, name)))
        for name in WRITER_SETTINGS:
            setattr(DataFrameWriter, name, _setting(name, getattr(DataFrameWriter, name)))
        for name in WRITES:
            setattr(DataFrameWriter, name, _write(name, getattr(DataFrameWriter, name)))
        for name in READS:
            setattr(DataFrameReader, name, _read(name, getattr(DataFrameReader, name)))
        implicit_rdd.install()
        _installed = True


def _captured(lc: Any, df: Any, op: str) -> Any:
    """``df``'s captured frame, or None (recorded as not captured) when its query cannot be."""
    from capture_agent.record.capture.frame_plan import captured_query

    try:
        return captured_query(lc, df)
    except Exception as exc:  # noqa: BLE001 - the job must run whatever the capture does
        report_plain(lc, op, why_plain(exc))
    return None


def _action(name: str, plain: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(plain)
    def action(self: Any, *args: Any, **kwargs: Any) -> Any:
        lc = _context_of(self)
        if lc is None:
            return plain(self, *args, **kwargs)

        # the agent's own queries while it captures run plain, named after the user's line
        with uncaptured(), CallSite(lc.sc, user_call_site(name)):
            return run_or_plain(lc, self, name, lambda: plain(self, *args, **kwargs), *args, **kwargs)[0]

    return action


def _read(name: str, plain: Callable[..., Any]) -> Callable[..., Any]:
    """A reader method, run plain, under the user's call site: the jobs Spark runs to list the
    files and infer their schema are named by the user's line (``json at job.py:12``), not
    ``json at NativeMethodAccessorImpl.java:0``."""

    @functools.wraps(plain)
    def read(self: Any, *args: Any, **kwargs: Any) -> Any:
        sc = getattr(getattr(self, "_spark", None), "sparkContext", None)
        if sc is None or active_context(sc) is None or not from_user_code():
            return plain(self, *args, **kwargs)
        with CallSite(sc, user_call_site(name)):
            return plain(self, *args, **kwargs)

    return read


def _setting(name: str, plain: Callable[..., Any]) -> Callable[..., Any]:
    """A writer setting, also remembered on the writer so that a captured write applies it."""

    @functools.wraps(plain)
    def setting(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.__dict__.setdefault("_lineage_settings", []).append((name, args, kwargs))
        return plain(self, *args, **kwargs)

    return setting


def _write(name: str, plain: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(plain)
    def write(self: Any, *args: Any, **kwargs: Any) -> Any:
        df = getattr(self, "_df", None)
        lc = _context_of(df) if df is not None else None
        if lc is None:
            return plain(self, *args, **kwargs)

        def run() -> Any:
            frame = _captured(lc, df, f"write.{name}")
            if frame is None:
                return plain(self, *args, **kwargs)
            try:
                writer = frame.write  # a setting the captured writer does not take raises UnsupportedOperation
                for setting, a, k in self.__dict__.get("_lineage_settings", []):
                    writer = getattr(writer, setting)(*a, **k)
                return getattr(writer, name)(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the job runs whatever the capture does
                report_plain(lc, f"write.{name}", why_plain(exc))
                return plain(self, *args, **kwargs)

        with uncaptured(), CallSite(lc.sc, user_call_site(name)):
            return run()

    return write
