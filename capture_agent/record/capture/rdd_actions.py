"""Actions of captured RDDs (PySpark's signatures and results) and ``getLineage``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from capture_agent.record.capture.plan import Node
from capture_agent.record.capture.runtime import CaptureRuntime
from capture_agent.record.errors import NotCaptured, UnsupportedOperation
from capture_agent.record.query.lineage_rdd import LineageRDD
from capture_agent.record.query.recipes import IN_TASKS, Redo
from capture_agent.record.worker.actions import Fold, MaxBy


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

    def _aggregate(self, op: str, method: str, *args: Any, redo: Redo | None = None) -> Any:
        """PySpark's ``method(*args)``; ``redo`` replays it (default: the same call, nothing for an
        empty RDD where PySpark raises)."""
        return self._rt.actions.aggregate(self._node, op, method, args,
                                          redo or Redo(method, *args, shape="one_or_none"))

    def reduce(self, f: Callable[[Any, Any], Any]) -> Any:
        return self._aggregate("reduce", "reduce", f, redo=Redo(IN_TASKS, Fold(f, f)))

    def treeReduce(self, f: Callable[[Any, Any], Any], depth: int = 2) -> Any:
        return self._aggregate("treeReduce", "treeReduce", f, depth, redo=Redo(IN_TASKS, Fold(f, f)))

    def fold(self, zeroValue: Any, op: Callable[[Any, Any], Any]) -> Any:
        return self._aggregate("fold", "fold", zeroValue, op, redo=Redo(IN_TASKS, Fold(op, op, zeroValue)))

    def aggregate(self, zeroValue: Any, seqOp: Callable[[Any, Any], Any], combOp: Callable[[Any, Any], Any]) -> Any:
        return self._aggregate("aggregate", "aggregate", zeroValue, seqOp, combOp,
                               redo=Redo(IN_TASKS, Fold(seqOp, combOp, zeroValue)))

    def treeAggregate(self, zeroValue: Any, seqOp: Callable[[Any, Any], Any], combOp: Callable[[Any, Any], Any],
                      depth: int = 2) -> Any:
        return self._aggregate("treeAggregate", "treeAggregate", zeroValue, seqOp, combOp, depth,
                               redo=Redo(IN_TASKS, Fold(seqOp, combOp, zeroValue)))

    def sum(self) -> Any:
        return self._aggregate("sum", "sum")

    def _extreme(self, op: str, key: Callable[[Any], Any] | None) -> Any:
        if key is None:
            return self._aggregate(op, op)
        pick = MaxBy(key, largest=op == "max")
        return self._aggregate(op, op, key, redo=Redo(IN_TASKS, Fold(pick, pick)))

    def max(self, key: Callable[[Any], Any] | None = None) -> Any:
        return self._extreme("max", key)

    def min(self, key: Callable[[Any], Any] | None = None) -> Any:
        return self._extreme("min", key)

    def mean(self) -> float:
        return self._aggregate("mean", "mean")

    def stats(self) -> Any:
        return self._aggregate("stats", "stats")

    def variance(self) -> float:
        return self._aggregate("variance", "variance")

    def stdev(self) -> float:
        return self._aggregate("stdev", "stdev")

    def sampleStdev(self) -> float:
        return self._aggregate("sampleStdev", "sampleStdev")

    def sampleVariance(self) -> float:
        return self._aggregate("sampleVariance", "sampleVariance")

    def foreach(self, f: Callable[[Any], None]) -> None:
        self._aggregate("foreach", "foreach", f, redo=Redo("foreach", f, shape="one", side_effects=True))

    def foreachPartition(self, f: Callable[[Iterable[Any]], None]) -> None:
        self._aggregate("foreachPartition", "foreachPartition", f,
                        redo=Redo("foreachPartition", f, shape="one", side_effects=True))

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

