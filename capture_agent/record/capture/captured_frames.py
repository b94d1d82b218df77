"""Captured DataFrames of the explicit API, and the actions of any DataFrame, captured.

    orders = lc.read.parquet("orders/")          # read.orc/table/text/csv/json, lc.createDataFrame, lc.sql
    totals = orders.join(customers, "customer_id").groupBy("country").agg(F.sum("amount"))
    totals.collect()                                     # PySpark's rows; lineage written
    totals.getLineage().filter(lambda r: r.country == "JP").goBackAll().collect()   # input Rows

A ``CapturedDataFrame`` is PySpark's DataFrame, as is: every method is PySpark's own, applied to
the plain frame it holds (a frame, grouped data, ``na`` or ``stat`` it gives is wrapped again, and
captured frames given as arguments are unwrapped). Nothing is captured until an action runs;
then the query is captured at its plan in the JVM, as an unmodified job's queries are
(``frame_plan.captured_query``): its sources are the ones the context read (``lc.read...``, known
by what their plans' leaves read), or any other files, tables or local rows the query reads, read
again with ids. So the explicit API captures whatever the rewrite captures, and refuses, at the
action, what it refuses (``UnsupportedOperation`` naming the operator). A capture that fails while
it runs never fails the job: the action runs plain and is recorded as not captured, as an
unmodified job's is, and the frame's ``getLineage`` raises ``NotCaptured`` saying why.

``run_action`` is that action, shared with the implicit capture (``capture/implicit.py``):

| action | captured query |
|---|---|
| collect, toPandas, write.*, rdd | the frame's |
| take(n), head(n), first, show(n) | the frame limited to n rows (show: n + 1) |
| count | the frame's count aggregate (one row, traced to every row counted) |
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from capture_agent.record.capture.implicit_guard import report_plain, why_plain
from capture_agent.record.errors import NotCaptured, UnsupportedOperation

if TYPE_CHECKING:
    from capture_agent.record.capture.frames import LineageFrame
    from capture_agent.record.query.lineage_rdd import LineageRDD


def captured(lc: Any, df: Any) -> LineageFrame:
    from capture_agent.record.capture.frame_plan import captured_query

    return captured_query(lc, df)


def run_action(lc: Any, df: Any, name: str, *args: Any, **kwargs: Any) -> tuple[Any, LineageFrame]:
    """Runs action ``name`` of the plain DataFrame ``df`` captured: (what PySpark's action gives,
    the captured frame whose output point it wrote)."""
    if name == "collect":
        frame = captured(lc, df)
        return frame.collect(), frame
    if name == "toPandas":
        frame = captured(lc, df)
        return frame.toPandas(), frame
    if name == "count":
        frame = captured(lc, df.groupBy().count())
        return int(frame.collect("count")[0][0]), frame
    if name == "take":
        (num,) = args or (kwargs["num"],)
        frame = captured(lc, df.limit(num))
        return frame.collect("take"), frame
    if name in ("head", "first"):
        n = (args[0] if args else kwargs.get("n")) if name == "head" else None
        frame = captured(lc, df.limit(1 if n is None else n))
        rows = frame.collect("head")
        return ((rows[0] if rows else None) if n is None else rows), frame
    if name == "show":
        return _show(lc, df, *args, **kwargs)
    raise UnsupportedOperation(f"DataFrame.{name}")


def run_or_plain(lc: Any, df: Any, name: str, plain: Callable[[], Any], /, *args: Any, refuse: bool = False,
                 **kwargs: Any) -> tuple[Any, LineageFrame | None, str | None]:
    """Action ``name`` of ``df`` captured: (its result, the captured frame, None). A capture that
    fails does not fail the job: the action runs plain (``plain()``; if the query itself fails, the
    user sees PySpark's own error) and is recorded as not captured: (its result, None, why).
    ``refuse``: a refusal (``UnsupportedOperation``) raises instead, as the explicit API does."""
    try:
        result, frame = run_action(lc, df, name, *args, **kwargs)
    except Exception as exc:  # the job runs whatever the capture does (a refusal re-raised)
        if refuse and isinstance(exc, UnsupportedOperation):
            raise
        why = why_plain(exc)
        report_plain(lc, name, why)
        return plain(), None, why
    return result, frame, None


def _show(lc: Any, df: Any, n: int = 20, truncate: bool | int = True, vertical: bool = False) -> tuple[None, Any]:
    """``df.show()``, captured: the rows it prints (its first ``n``, and one more that tells
    whether there are more) are collected once as an output point, then printed by Spark's own
    formatting of those rows, as show prints them."""
    frame = captured(lc, df.limit(n + 1))
    rows = frame.collect("show")
    shown = df.sparkSession.createDataFrame(rows, frame.schema, verifySchema=False)
    print(shown._show_string(n, truncate, vertical))
    return None, frame


def _plain(value: Any) -> Any:
    """``value`` with captured frames replaced by their plain frames (in lists and tuples too)."""
    if isinstance(value, CapturedDataFrame):
        return value._df
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def _wrapped(lc: Any, value: Any) -> Any:
    """What a method of a captured frame gives, as the user sees it: a DataFrame as a captured frame,
    grouped data and the ``na``/``stat`` helpers wrapped again, a method wrapped to do the same."""
    from pyspark.sql import DataFrame, DataFrameNaFunctions, DataFrameStatFunctions, GroupedData

    if isinstance(value, DataFrame):
        return CapturedDataFrame(lc, value)
    if isinstance(value, (GroupedData, DataFrameNaFunctions, DataFrameStatFunctions)):
        return _Wrapped(lc, value)
    if inspect.ismethod(value):

        def method(*args: Any, **kwargs: Any) -> Any:
            return _wrapped(lc, value(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()}))

        method.__doc__ = value.__doc__
        return method
    return value


class _Wrapped:
    """PySpark's grouped data or a frame's ``na``/``stat``: what its methods give is wrapped."""

    def __init__(self, lc: Any, inner: Any) -> None:
        self._lc = lc
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _wrapped(self._lc, getattr(self._inner, name))


class CapturedDataFrame:
    """A DataFrame of the explicit API (see the module docstring): PySpark's, captured at its actions."""

    def __init__(self, lc: Any, df: Any, source: LineageFrame | None = None) -> None:
        self._lc = lc
        self._df = df  # the plain DataFrame
        self._source = source  # the captured source, for a frame a reader made
        self._last: LineageFrame | None = None  # the frame of its last action
        self._failed: str | None = None  # why its last action ran plain

    @property
    def _point(self) -> str | None:
        """The output point of its last action (a source: its input point)."""
        if self._last is not None and self._last._point is not None:
            return self._last._point
        return self._source._point if self._source is not None else None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_df", "_lc", "_source", "_last", "_failed"):
            raise AttributeError(name)
        return _wrapped(self._lc, getattr(self._df, name))

    def __getitem__(self, item: Any) -> Any:
        return _wrapped(self._lc, self._df[_plain(item)])

    def __repr__(self) -> str:
        return f"Captured{self._df!r}"

    def plain(self) -> Any:
        """The plain DataFrame (what PySpark alone computes, uncaptured)."""
        return self._df

    def _run(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Action ``name`` captured; a query the capture refuses raises ``UnsupportedOperation``
        naming what stopped it. A capture that fails while it runs (not the query: Spark's own
        error comes from the plain run) does not fail the job: the action runs plain, is recorded
        as not captured, and ``getLineage`` says why."""
        result, self._last, self._failed = run_or_plain(
            self._lc, self._df, name, lambda: getattr(self._df, name)(*args, **kwargs), *args, refuse=True, **kwargs)
        return result

    def collect(self) -> list[Any]:
        return self._run("collect")

    def take(self, num: int) -> list[Any]:
        return self._run("take", num)

    def head(self, n: int | None = None) -> Any:
        return self._run("head", n)

    def first(self) -> Any:
        return self._run("first")

    def count(self) -> int:
        return self._run("count")

    def toPandas(self) -> Any:
        return self._run("toPandas")

    def show(self, *args: Any, **kwargs: Any) -> None:
        """Shows the rows, as PySpark does (a display: no output point)."""
        self._df.show(*args, **kwargs)

    def tail(self, num: int) -> list[Any]:
        raise UnsupportedOperation("DataFrame.tail", "orderBy the reverse order and take()")

    @property
    def write(self) -> Any:
        """The writer of the frame captured now (a query the capture refuses raises here)."""
        self._last = captured(self._lc, self._df)
        return self._last.write

    @property
    def rdd(self) -> Any:
        """The rows as a captured RDD: its records trace back to this frame's sources, and the RDD
        job's outputs forward from them."""
        self._last = captured(self._lc, self._df)
        return self._last.rdd

    def getLineage(self) -> LineageRDD:
        """A LineageRDD at this frame's last action's output (a source: at its records)."""
        from capture_agent.record.query.lineage_rdd import LineageRDD

        if self._failed is not None:
            raise NotCaptured(f"its last action ran without record lineage: {self._failed}")
        point = self._point
        if point is None:
            raise NotCaptured("run an action on this DataFrame first (collect, count, write...)")
        return LineageRDD.at_point(self._lc.lineage_session, point)


def user_frame(lc: Any, made: LineageFrame) -> CapturedDataFrame:
    """A source the context read (``made``) as the user's captured frame: its plain rows."""
    return CapturedDataFrame(lc, made.plain(), source=made)
