"""RDD jobs captured by configuration: the SparkContext's sources as captured RDDs, unmodified.

With records on (``capture.implicit``), ``sc.textFile``, ``sc.parallelize``, ``sc.range`` and a
DataFrame's ``.rdd`` give RDDs of the implicit LineageContext: PySpark's RDD API, their jobs
captured as ``lc.textFile(...)``'s are (``capture.rdd``). They are ``ImplicitRDD``s, which never
fail the job: a method the capture does not take (a join with an RDD it did not make...) or a
captured action that fails runs on the plain PySpark RDD instead, from there on, and is reported as
not captured with why (``implicit_guard.report_plain``).
``spark.createDataFrame(rdd)`` (and ``rdd.toDF()``) of a captured RDD gives a frame whose rows
carry the RDD's records' ids (``frame_sources.rdd_frame``): its actions' lineage goes on into the
RDD job. PySpark's other code that takes an RDD (``sc.union`` of RDDs the capture did not all make)
gets the plain RDD.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from pyspark.core.rdd import RDD

from capture_agent.record.capture.implicit_guard import (
    active_context,
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


def _or_plain(lc: Any, op: str, captured: Callable[[], Any], plain: Callable[[], Any]) -> Any:
    """``captured()``, or on any failure ``plain()``, reported as ``op`` run plain. The capture's
    own Spark calls are never captured; an error the job itself makes is PySpark's own, raised
    by ``plain()``, not reported."""
    with uncaptured():
        try:
            return captured()
        except Exception as exc:  # noqa: BLE001 - the job runs whatever the capture does
            failure = exc
        answer = plain()
    if lc is not None:
        report_plain(lc, op, why_plain(failure))
    return answer


def _falling_back(name: str, captured: Callable[..., Any]) -> Callable[..., Any]:
    """``captured`` (a CapturedRDD method), or on any failure PySpark's own method on the plain RDD."""

    @functools.wraps(captured)
    def method(self: ImplicitRDD, *args: Any, **kwargs: Any) -> Any:
        return _or_plain(records_context(self._rt.sc), f"RDD.{name}", lambda: captured(self, *args, **kwargs),
                         lambda: getattr(self.plain(), name)(*_plain(args),
                                                             **{k: _plain(v) for k, v in kwargs.items()}))

    return method


class ImplicitRDD(CapturedRDD):
    """A captured RDD of implicit capture: any method the capture cannot run runs plain."""

    def toDF(self, schema: Any = None, sampleRatio: float | None = None) -> Any:
        """PySpark's ``rdd.toDF``: a plain DataFrame, whose rows carry the records' ids (``_frame_of_rdd``)."""
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        return session.createDataFrame(self, schema, sampleRatio)

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
    if not _name.startswith("_") and _name not in PLAIN_SAFE | ImplicitRDD.__dict__.keys() and hasattr(RDD, _name):
        setattr(ImplicitRDD, _name, _falling_back(_name, _member))


def install() -> None:
    """Wraps the SparkContext's sources and what takes RDDs, once a process."""
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    from pyspark.sql.classic.dataframe import DataFrame

    for name in SOURCES:
        setattr(SparkContext, name, _source(name, getattr(SparkContext, name)))
    for name in UNCAPTURED_SOURCES:
        setattr(SparkContext, name, _uncaptured_source(name, getattr(SparkContext, name)))
    SparkSession.createDataFrame = _frame_of_rdd(SparkSession.createDataFrame)  # type: ignore[method-assign]
    rows = functools.cached_property(_frame_rdd(DataFrame.rdd.func))  # type: ignore[attr-defined]
    rows.__set_name__(DataFrame, "rdd")
    DataFrame.rdd = rows  # type: ignore[assignment,method-assign]


def _source(name: str, plain: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(plain)
    def source(sc: Any, *args: Any, **kwargs: Any) -> Any:
        lc = active_context(sc)
        if lc is None or not from_user_code():
            return plain(sc, *args, **kwargs)
        return _or_plain(lc, f"SparkContext.{name}", lambda: _captured_source(lc, name, *args, **kwargs),
                         lambda: plain(sc, *_plain(args), **kwargs))

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


def _uncaptured_source(name: str, plain: Callable[..., Any]) -> Callable[..., Any]:
    """A source the capture does not read: plain, and reported so."""

    @functools.wraps(plain)
    def source(sc: Any, *args: Any, **kwargs: Any) -> Any:
        lc = active_context(sc)
        if lc is not None and from_user_code():
            report_plain(lc, f"SparkContext.{name}", "the capture reads textFile, parallelize and range sources "
                         "(and DataFrames): this RDD and what follows run plain")
        return plain(sc, *args, **kwargs)

    return source


def _frame_of_rdd(plain: Callable[..., Any]) -> Callable[..., Any]:
    """``spark.createDataFrame``: of a captured RDD of this context, a frame whose rows carry its
    records' ids, so that its actions' lineage goes on into the RDD job (the frame is the plain
    frame of those rows; its source is known by what its plan reads: ``frame_plan.captured_query``);
    else PySpark's own, given plain RDDs. Called by PySpark's own ``rdd.toDF()`` too."""

    @functools.wraps(plain)
    def method(self: Any, data: Any, schema: Any = None, samplingRatio: Any = None, verifySchema: Any = True) -> Any:
        lc = active_context(self.sparkContext) if isinstance(data, ImplicitRDD) else None
        if lc is None or data._rt is not lc._rt:
            return plain(self, _plain(data), schema, samplingRatio, verifySchema)
        return _or_plain(lc, "SparkSession.createDataFrame", lambda: _rdd_rows(lc, data, schema, samplingRatio),
                         lambda: plain(self, _plain(data), schema, samplingRatio, verifySchema))

    return method


def _rdd_rows(lc: Any, rdd: Any, schema: Any, samplingRatio: Any) -> Any:
    from capture_agent.record.capture.frame_sources import rdd_frame

    return rdd_frame(lc, rdd, schema, samplingRatio).plain()


def _frame_rdd(plain: Callable[[Any], Any]) -> Callable[[Any], Any]:
    @functools.wraps(plain)
    def rdd(df: Any) -> Any:
        try:
            lc = active_context(df.sparkSession.sparkContext)
        except Exception:  # noqa: BLE001 - a frame of no classic session: plain
            lc = None
        if lc is None or not from_user_code():
            return plain(df)
        from capture_agent.record.capture.frame_plan import captured_query

        return _or_plain(lc, "DataFrame.rdd", lambda: captured_query(lc, df).rdd, lambda: plain(df))

    return rdd
