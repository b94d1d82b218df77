"""RDD jobs captured by configuration: the SparkContext's sources as captured RDDs, unmodified.

With records on (``capture.implicit``), ``sc.textFile``, ``sc.parallelize``, ``sc.range`` and a
DataFrame's ``.rdd`` give RDDs of the implicit LineageContext: PySpark's RDD API, their jobs
captured as ``lc.textFile(...)``'s are (``capture.rdd``). They are ``ImplicitRDD``s, which never
fail the job: a method the capture does not take (``pipe``'s sibling ``mapPartitionsWithSplit``, a
join with an RDD it did not make...) or a captured action that fails runs on the plain PySpark RDD
instead, from there on, and is reported as not captured with why (``implicit.report_plain``).
PySpark's own code that takes an RDD (``spark.createDataFrame``, ``sc.union``) gets the plain RDD;
the frame's actions are then captured from its rows on (its lineage starts there).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from pyspark.core.rdd import RDD

from capture_agent.record.capture.implicit_guard import (
    from_user_code,
    records_context,
    report_plain,
    uncaptured,
    why_plain,
)
from capture_agent.record.capture.rdd import CapturedRDD
from capture_agent.record.errors import UnsupportedOperation

SOURCES = ("textFile", "parallelize", "range", "union")
UNCAPTURED_SOURCES = ("wholeTextFiles", "binaryFiles", "binaryRecords", "pickleFile", "sequenceFile",
                      "hadoopFile", "hadoopRDD", "newAPIHadoopFile", "newAPIHadoopRDD")
# Methods that neither compute nor can fail: not wrapped.
PLAIN_SAFE = frozenset({"plain", "getLineage", "toDebugString", "id", "name", "setName",
                        "getNumPartitions", "getStorageLevel", "isCheckpointed", "isLocallyCheckpointed",
                        "getCheckpointFile"})


def _plain(value: Any) -> Any:
    """A value to give PySpark's own RDD methods: captured RDDs become their plain RDDs."""
    if isinstance(value, CapturedRDD):
        return value.plain()
    if isinstance(value, list | tuple) and any(isinstance(v, CapturedRDD) for v in value):
        return type(value)(_plain(v) for v in value)
    return value


def _falling_back(name: str, captured: Callable[..., Any]) -> Callable[..., Any]:
    """``captured`` (a CapturedRDD method), or on any failure PySpark's own method on the plain RDD."""

    @functools.wraps(captured)
    def method(self: ImplicitRDD, *args: Any, **kwargs: Any) -> Any:
        with uncaptured():  # the capture's own Spark calls are never captured
            try:
                return captured(self, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the job runs whatever the capture does
                failure = exc
            # plain: an error the job itself makes is PySpark's own, raised from here, not reported
            answer = getattr(self.plain(), name)(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()})
        lc = records_context(self._rt.sc)
        if lc is not None:
            report_plain(lc, f"RDD.{name}", why_plain(failure))
        return answer

    return method


class ImplicitRDD(CapturedRDD):
    """A captured RDD of implicit capture: any method the capture cannot run runs plain."""

    def __getattr__(self, name: str) -> Any:
        # What CapturedRDD does not have (PySpark's private attributes too, for PySpark's own code
        # that reaches into an RDD): the plain RDD's, whose lineage is not captured.
        if name.startswith("__"):
            raise AttributeError(name)
        plain = self.plain()
        if not hasattr(plain, name):
            raise AttributeError(f"'RDD' object has no attribute {name!r}")
        lc = records_context(self._rt.sc)
        if lc is not None and not name.startswith("_"):
            report_plain(lc, f"RDD.{name}", f"the capture does not take RDD.{name}: it and what follows run plain")
        return getattr(plain, name)


for _name, _member in inspect.getmembers(CapturedRDD, inspect.isfunction):
    if not _name.startswith("_") and _name not in PLAIN_SAFE and hasattr(RDD, _name):
        setattr(ImplicitRDD, _name, _falling_back(_name, _member))


def install(context_of: Callable[[Any], Any]) -> None:
    """Wraps the SparkContext's sources and what takes RDDs, once a process (``context_of(sc)``:
    the active implicit LineageContext of a SparkContext, or None)."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    from pyspark.sql.classic.dataframe import DataFrame

    for name in SOURCES:
        setattr(SparkContext, name, _source(name, getattr(SparkContext, name), context_of))
    for name in UNCAPTURED_SOURCES:
        setattr(SparkContext, name, _uncaptured_source(name, getattr(SparkContext, name), context_of))
    SparkSession.createDataFrame = _taking_plain(SparkSession.createDataFrame)  # type: ignore[method-assign]
    rows = functools.cached_property(_frame_rdd(DataFrame.rdd.func, context_of))  # type: ignore[attr-defined]
    rows.__set_name__(DataFrame, "rdd")
    DataFrame.rdd = rows  # type: ignore[assignment,method-assign]


def _source(name: str, plain: Callable[..., Any], context_of: Callable[[Any], Any]) -> Callable[..., Any]:
    @functools.wraps(plain)
    def source(sc: Any, *args: Any, **kwargs: Any) -> Any:
        lc = context_of(sc)
        if lc is None or not from_user_code():
            return plain(sc, *args, **kwargs)
        with uncaptured():
            try:
                return _captured_source(lc, name, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the job runs whatever the capture does
                failure = exc
            answer = plain(sc, *_plain(args), **kwargs)
        report_plain(lc, f"SparkContext.{name}", why_plain(failure))
        return answer

    return source


def _captured_source(lc: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    if name == "range":
        return _range(lc, *args, **kwargs)
    if name == "union":
        (rdds,) = args or (kwargs["rdds"],)
        if not all(isinstance(r, ImplicitRDD) and r._rt is lc._rt for r in rdds):
            raise UnsupportedOperation("SparkContext.union", "an RDD of the union was not made by the capture")
        return lc.union(list(rdds))
    return getattr(lc, name)(*args, **kwargs)


def _range(lc: Any, start: int, end: int | None = None, step: int = 1, numSlices: int | None = None) -> Any:
    """``sc.range`` as PySpark makes it: ``parallelize`` of a range."""
    if end is None:
        start, end = 0, start
    return lc.parallelize(range(start, end, step), numSlices)


def _uncaptured_source(name: str, plain: Callable[..., Any], context_of: Callable[[Any], Any]) -> Callable[..., Any]:
    """A source the capture does not read: plain, and reported so."""

    @functools.wraps(plain)
    def source(sc: Any, *args: Any, **kwargs: Any) -> Any:
        lc = context_of(sc)
        if lc is not None and from_user_code():
            report_plain(lc, f"SparkContext.{name}", "the capture reads textFile, parallelize and range sources "
                         "(and DataFrames): this RDD and what follows run plain")
        return plain(sc, *args, **kwargs)

    return source


def _taking_plain(plain: Callable[..., Any]) -> Callable[..., Any]:
    """PySpark's own method, given plain RDDs where it is given captured ones."""

    @functools.wraps(plain)
    def method(self: Any, data: Any, *args: Any, **kwargs: Any) -> Any:
        return plain(self, _plain(data), *args, **kwargs)

    return method


def _frame_rdd(plain: Callable[[Any], Any], context_of: Callable[[Any], Any]) -> Callable[[Any], Any]:
    @functools.wraps(plain)
    def rdd(df: Any) -> Any:
        try:
            lc = context_of(df.sparkSession.sparkContext)
        except Exception:  # noqa: BLE001 - a frame of no classic session: plain
            lc = None
        if lc is None or not from_user_code():
            return plain(df)
        from capture_agent.record.capture.frame_plan import captured_query

        with uncaptured():
            try:
                return captured_query(lc, df).rdd
            except Exception as exc:  # noqa: BLE001 - the job runs whatever the capture does
                failure = exc
        report_plain(lc, "DataFrame.rdd", why_plain(failure))
        return plain(df)

    return rdd
