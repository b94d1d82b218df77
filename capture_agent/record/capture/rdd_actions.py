"""Actions of captured RDDs (PySpark's signatures and results) and ``getLineage``."""

from __future__ import annotations

import random
import sys
from collections.abc import Callable, Iterable
from math import isinf, isnan, sqrt
from typing import TYPE_CHECKING, Any

from capture_agent.record.capture.plan import Node
from capture_agent.record.capture.runtime import CaptureRuntime
from capture_agent.record.errors import NotCaptured, UnsupportedOperation
from capture_agent.record.query.lineage_rdd import LineageRDD
from capture_agent.record.query.recipes import IN_TASKS, Redo
from capture_agent.record.worker.actions import BucketCounts, Buckets, Fold, MaxBy
from capture_agent.record.worker.functions import is_comparable, is_not_none, min_max, pair_of


def histogram_buckets(plain: Any, buckets: int | list[Any] | tuple[Any, ...]) -> Buckets:
    """PySpark's histogram buckets, and where it puts a value: ``buckets`` evenly spaced between
    the RDD's min and max (computed on ``plain``, a job as in PySpark), or the bounds given."""
    if isinstance(buckets, int):
        if buckets < 1:
            raise ValueError("number of buckets must be >= 1")
        try:
            low, high = plain.filter(is_comparable).map(pair_of).reduce(min_max)
        except (TypeError, ValueError) as exc:
            if " empty " in str(exc) or "empty RDD" in str(exc):
                raise ValueError("can not generate buckets from empty RDD") from exc
            raise
        if low == high or buckets == 1:
            return Buckets([low, high], True, None, single=True)
        try:
            inc = (high - low) / buckets
        except TypeError as exc:
            raise TypeError("Can not generate buckets with non-number in RDD") from exc
        if isinf(inc):
            raise ValueError("Can not generate buckets with infinite value")
        inc = int(inc)
        if inc * buckets != high - low:
            inc = (high - low) * 1.0 / buckets
        bounds = [i * inc + low for i in range(buckets)]
        bounds.append(high)
        return Buckets(bounds, True, inc)
    if not isinstance(buckets, (list, tuple)):
        raise TypeError("buckets should be a list or tuple or number(int or long)")
    if len(buckets) < 2:
        raise ValueError("buckets should have more than one value")
    if any(b is None or isinstance(b, float) and isnan(b) for b in buckets):
        raise ValueError("can not have None or NaN in buckets")
    if sorted(buckets) != list(buckets):
        raise ValueError("buckets should be sorted")
    if len(set(buckets)) != len(buckets):
        raise ValueError("buckets should not contain duplicated values")
    bounds = list(buckets)
    try:
        steps = [bounds[i + 1] - bounds[i] for i in range(len(bounds) - 1)]
    except TypeError:
        return Buckets(bounds, False, None)
    if max(steps) - min(steps) < 1e-10:  # PySpark's test for even buckets
        return Buckets(bounds, True, (bounds[-1] - bounds[0]) / (len(bounds) - 1))
    return Buckets(bounds, False, None)


class ActionMethods:
    """The actions of CapturedRDD: each runs the compiled job and registers an output point."""

    _rt: CaptureRuntime
    _node: Node

    if TYPE_CHECKING:  # provided by CapturedRDD
        def filter(self, f: Callable[[Any], bool]) -> Any: ...
        def keys(self) -> Any: ...
        def getNumPartitions(self) -> int: ...
        def map(self, f: Callable[[Any], Any]) -> Any: ...
        def plain(self) -> Any: ...
        def sample(self, withReplacement: bool, fraction: float, seed: int | None = None) -> Any: ...

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

    def countApprox(self, timeout: int, confidence: float = 0.95) -> int:
        """The count (PySpark's partial count on a timeout): the result <- every record counted."""
        return self._aggregate("countApprox", "countApprox", timeout, confidence,
                               redo=Redo("count", shape="one"))

    def sumApprox(self, timeout: int, confidence: float = 0.95) -> Any:
        return self._aggregate("sumApprox", "sumApprox", timeout, confidence, redo=Redo("sum", shape="one"))

    def meanApprox(self, timeout: int, confidence: float = 0.95) -> Any:
        return self._aggregate("meanApprox", "meanApprox", timeout, confidence, redo=Redo("mean", shape="one"))

    def countApproxDistinct(self, relativeSD: float = 0.05) -> int:
        """HyperLogLog's estimate, as PySpark's: the result <- every record."""
        if relativeSD < 0.000017:
            raise ValueError("relativeSD should be greater than 0.000017")
        return self._aggregate("countApproxDistinct", "countApproxDistinct", relativeSD,
                               redo=Redo("countApproxDistinct", relativeSD, shape="one"))

    def takeSample(self, withReplacement: bool, num: int, seed: int | None = None) -> list[Any]:
        """PySpark's takeSample (its counts, samples and shuffle); each result <- the record it is."""
        max_sample = sys.maxsize - int(10.0 * sqrt(sys.maxsize))
        if num < 0:
            raise ValueError("Sample size cannot be negative.")
        if num > max_sample:
            raise ValueError(f"Sample size cannot be greater than {max_sample}.")
        if num == 0 or self.getNumPartitions() == 0:
            return []
        total = self.plain().count()  # PySpark counts first too; this count is not an output
        if total == 0:
            return []
        if seed is None:  # one seed for the sample and the replay
            seed = random.randint(0, sys.maxsize)
        return self._rt.actions.take_sample(self._node, withReplacement, num, seed, total,
                                            lambda fraction, s: self.sample(withReplacement, fraction, s)._node)

    def histogram(self, buckets: int | list[Any] | tuple[Any, ...]) -> tuple[list[Any], list[int]]:
        """PySpark's histogram; the count of bucket i <- the records in it (a combiner on the
        bucket index, as countByValue)."""
        placed = histogram_buckets(self.plain(), buckets)
        counts = self.map(placed.index).filter(is_not_none)
        n = len(placed.bounds) - 1
        per_bucket = self._rt.actions.count_by_value(counts._node, "histogram", owner=self._node,
                                                     keys=list(range(n)), redo=Redo(IN_TASKS, BucketCounts(n)))
        return placed.bounds, [per_bucket.get(i, 0) for i in range(n)]

    # ------------------------------------------------------------------ saves
    def saveAsPickleFile(self, path: str, batchSize: int = 10) -> None:
        self._save("saveAsPickleFile", path, "pickle", lambda rdd: rdd.saveAsPickleFile(path, batchSize))

    def saveAsSequenceFile(self, path: str, compressionCodecClass: str | None = None) -> None:
        self._save("saveAsSequenceFile", path, "sequence",
                   lambda rdd: rdd.saveAsSequenceFile(path, compressionCodecClass))

    def saveAsHadoopFile(self, path: str, outputFormatClass: str, *args: Any, **kwargs: Any) -> None:
        self._save("saveAsHadoopFile", path, "hadoop",
                   lambda rdd: rdd.saveAsHadoopFile(path, outputFormatClass, *args, **kwargs))

    def saveAsNewAPIHadoopFile(self, path: str, outputFormatClass: str, *args: Any, **kwargs: Any) -> None:
        self._save("saveAsNewAPIHadoopFile", path, "hadoop",
                   lambda rdd: rdd.saveAsNewAPIHadoopFile(path, outputFormatClass, *args, **kwargs))

    def saveAsHadoopDataset(self, conf: dict[str, str], *args: Any, **kwargs: Any) -> None:
        self._save("saveAsHadoopDataset", conf.get("mapred.output.dir"), "hadoop",
                   lambda rdd: rdd.saveAsHadoopDataset(conf, *args, **kwargs))

    def saveAsNewAPIHadoopDataset(self, conf: dict[str, str], *args: Any, **kwargs: Any) -> None:
        self._save("saveAsNewAPIHadoopDataset", conf.get("mapreduce.output.fileoutputformat.outputdir"),
                   "hadoop", lambda rdd: rdd.saveAsNewAPIHadoopDataset(conf, *args, **kwargs))

    def _save(self, op: str, path: str | None, output_format: str, save: Callable[[Any], None]) -> None:
        """A save whose record k of part file p is output (p, k): compression changes nothing there."""
        self._rt.actions.save_records(self._node, op, path, output_format, save)

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

