"""Actions of captured RDDs (PySpark's signatures and results) and ``getLineage``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pyspark.core.rdd import RDD

from capture_agent.record.capture.plan import Node
from capture_agent.record.capture.runtime import CaptureRuntime
from capture_agent.record.errors import NotCaptured, UnsupportedOperation
from capture_agent.record.query.lineage_rdd import LineageRDD


class ActionMethods:
    """The actions of CapturedRDD: each runs the compiled job and registers an output point."""

    _rt: CaptureRuntime
    _node: Node

    if TYPE_CHECKING:  # provided by CapturedRDD
        def filter(self, f: Callable[[Any], bool]) -> Any: ...
        def keys(self) -> Any: ...
        def getNumPartitions(self) -> int: ...

    def collect(self) -> list[Any]:
        return self._rt.actions.collect(self._node, "collect")

    def collectAsMap(self) -> dict[Any, Any]:
        return dict(self._rt.actions.collect(self._node, "collectAsMap"))

    def take(self, num: int) -> list[Any]:
        return self._rt.actions.take(self._node, num, "take")

    def first(self) -> Any:
        rs = self._rt.actions.take(self._node, 1, "first")
        if rs:
            return rs[0]
        raise ValueError("RDD is empty")

    def isEmpty(self) -> bool:
        return self.getNumPartitions() == 0 or len(self._rt.actions.take(self._node, 1, "isEmpty")) == 0

    def count(self) -> int:
        return self._rt.actions.count(self._node)

    def toLocalIterator(self, prefetchPartitions: bool = False) -> Iterable[Any]:
        return iter(self._rt.actions.collect(self._node, "toLocalIterator"))

    def lookup(self, key: Any) -> list[Any]:
        return self.filter(lambda kv: kv[0] == key).values().collect()

    def _aggregate(self, op: str, run: Callable[[RDD], Any]) -> Any:
        return self._rt.actions.aggregate(self._node, op, run)

    def reduce(self, f: Callable[[Any, Any], Any]) -> Any:
        return self._aggregate("reduce", lambda r: r.reduce(f))

    def treeReduce(self, f: Callable[[Any, Any], Any], depth: int = 2) -> Any:
        return self._aggregate("treeReduce", lambda r: r.treeReduce(f, depth))

    def fold(self, zeroValue: Any, op: Callable[[Any, Any], Any]) -> Any:
        return self._aggregate("fold", lambda r: r.fold(zeroValue, op))

    def aggregate(self, zeroValue: Any, seqOp: Callable[[Any, Any], Any], combOp: Callable[[Any, Any], Any]) -> Any:
        return self._aggregate("aggregate", lambda r: r.aggregate(zeroValue, seqOp, combOp))

    def treeAggregate(self, zeroValue: Any, seqOp: Callable[[Any, Any], Any], combOp: Callable[[Any, Any], Any],
                      depth: int = 2) -> Any:
        return self._aggregate("treeAggregate", lambda r: r.treeAggregate(zeroValue, seqOp, combOp, depth))

    def sum(self) -> Any:
        return self._aggregate("sum", lambda r: r.sum())

    def max(self, key: Callable[[Any], Any] | None = None) -> Any:
        return self._aggregate("max", lambda r: r.max() if key is None else r.max(key))

    def min(self, key: Callable[[Any], Any] | None = None) -> Any:
        return self._aggregate("min", lambda r: r.min() if key is None else r.min(key))

    def mean(self) -> float:
        return self._aggregate("mean", lambda r: r.mean())

    def stats(self) -> Any:
        return self._aggregate("stats", lambda r: r.stats())

    def variance(self) -> float:
        return self._aggregate("variance", lambda r: r.variance())

    def stdev(self) -> float:
        return self._aggregate("stdev", lambda r: r.stdev())

    def sampleStdev(self) -> float:
        return self._aggregate("sampleStdev", lambda r: r.sampleStdev())

    def sampleVariance(self) -> float:
        return self._aggregate("sampleVariance", lambda r: r.sampleVariance())

    def foreach(self, f: Callable[[Any], None]) -> None:
        self._aggregate("foreach", lambda r: r.foreach(f))

    def foreachPartition(self, f: Callable[[Iterable[Any]], None]) -> None:
        self._aggregate("foreachPartition", lambda r: r.foreachPartition(f))

    def countByValue(self) -> dict[Any, int]:
        return self._rt.actions.count_by_value(self._node, "countByValue")

    def reduceByKeyLocally(self, func: Callable[[Any, Any], Any]) -> dict[Any, Any]:
        return self._rt.actions.count_by_value(self._node, "reduceByKeyLocally", merge=func)

    def countByKey(self) -> dict[Any, int]:
        return self._rt.actions.count_by_value(self.keys()._node, "countByKey", owner=self._node)

    def top(self, num: int, key: Callable[[Any], Any] | None = None) -> list[Any]:
        return self._rt.actions.ordered(self._node, "top", num, key, largest=True)

    def takeOrdered(self, num: int, key: Callable[[Any], Any] | None = None) -> list[Any]:
        if num < 0:
            raise ValueError("top N cannot be negative.")
        return self._rt.actions.ordered(self._node, "takeOrdered", num, key, largest=False)

    def saveAsTextFile(self, path: str, compressionCodecClass: str | None = None) -> None:
        if compressionCodecClass:
            raise UnsupportedOperation("saveAsTextFile", "compressed output has no stable line offsets; "
                                       "save uncompressed or use .plain()")
        self._rt.actions.save_text(self._node, path)

    # ------------------------------------------------------------------ lineage
    def getLineage(self) -> LineageRDD:
        """LineageRDD at this RDD's records: the output of its last action (Titian's getLineage)."""
        run = self._node.last_output
        if run is not None:
            return LineageRDD.at_output(self._rt.lineage, run.point.capture_id, run.ids or None)
        head = self._rt.compiler.compiled(self._node)
        if head is not None:
            return LineageRDD.at_point(self._rt.lineage, head.point.capture_id)
        raise NotCaptured(f"{self!r} has no lineage yet: run an action on it (collect, count, ...) first")

