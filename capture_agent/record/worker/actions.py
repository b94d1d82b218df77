"""Action steps for replay: the part of an action PySpark runs on the driver, run in a task.

Each step is called ``step("partial", records of one partition)`` in every partition's task, then
``step("final", the partial results in partition order)`` in one task, and returns the records of
the action's result (``query.recipes.in_tasks``). They hold the job's functions, so a replay
from a run's folder never calls one outside a Spark task.
"""

from __future__ import annotations

import copy
import heapq
from bisect import bisect_right
from collections.abc import Callable, Iterable
from functools import reduce
from typing import Any

from capture_agent.record.worker.functions import is_comparable

NO_ZERO = object()


class Fold:
    """reduce, fold, aggregate (and their tree forms), max/min with a key: PySpark's partition
    fold, then the partitions' results combined (without ``zero``: nothing from an empty RDD,
    where PySpark raises ValueError)."""

    def __init__(self, seq: Callable[[Any, Any], Any], comb: Callable[[Any, Any], Any], zero: Any = NO_ZERO) -> None:
        self.seq = seq
        self.comb = comb
        self.zero = zero

    def __call__(self, stage: str, records: Iterable[Any]) -> list[Any]:
        has_zero = self.zero is not NO_ZERO
        if stage == "partial":
            if has_zero:
                return [reduce(self.seq, records, copy.deepcopy(self.zero))]
            iterator = iter(records)
            for first in iterator:
                return [reduce(self.seq, iterator, first)]
            return []
        values = list(records)
        if has_zero:
            return [reduce(self.comb, values, copy.deepcopy(self.zero))]
        return [reduce(self.comb, values)] if values else []


class Ordered:
    """top / takeOrdered with a key: the ``num`` largest (smallest) of each partition, then of all."""

    def __init__(self, num: int, key: Callable[[Any], Any], largest: bool) -> None:
        self.num = num
        self.key = key
        self.largest = largest

    def __call__(self, stage: str, records: Iterable[Any]) -> list[Any]:
        pick = heapq.nlargest if self.largest else heapq.nsmallest
        return pick(self.num, records, key=self.key)


class LocalReduce:
    """reduceByKeyLocally: each partition's values merged per key, then the partitions' maps."""

    def __init__(self, func: Callable[[Any, Any], Any]) -> None:
        self.func = func

    def __call__(self, stage: str, records: Iterable[Any]) -> list[Any]:
        merged: dict[Any, Any] = {}
        pairs = records if stage == "partial" else (kv for m in records for kv in m.items())
        for key, value in pairs:
            merged[key] = self.func(merged[key], value) if key in merged else value
        return [merged] if stage == "partial" else list(merged.items())


class Buckets:
    """histogram's buckets, as PySpark places a value: ``index(x)`` is x's bucket, or None for
    None, NaN and values outside them; the last bucket holds its upper bound. ``single``: one
    bucket of every value but None and NaN (PySpark's answer when all values are equal)."""

    def __init__(self, bounds: list[Any], even: bool, inc: Any, single: bool = False) -> None:
        self.bounds = bounds
        self.even = even
        self.inc = inc
        self.single = single

    def index(self, x: Any) -> int | None:
        if not is_comparable(x):
            return None
        if self.single:
            return 0
        low, high = self.bounds[0], self.bounds[-1]
        if x > high or x < low:
            return None
        t = int((x - low) / self.inc) if self.even else bisect_right(self.bounds, x) - 1
        return min(t, len(self.bounds) - 2)


class BucketCounts:
    """histogram's replay on the records' bucket indices (``Buckets.index``, None dropped): each
    partition's count per bucket, then their sums, one record per bucket."""

    def __init__(self, buckets: int) -> None:
        self.buckets = buckets

    def __call__(self, stage: str, records: Iterable[Any]) -> list[Any]:
        if stage == "partial":
            counts = [0] * self.buckets
            for t in records:
                counts[t] += 1
            return [counts]
        totals = [0] * self.buckets
        for counts in records:
            totals = [a + b for a, b in zip(totals, counts, strict=True)]
        return totals


class MaxBy:
    """max/min with a key, as PySpark's ``reduce(lambda a, b: max(a, b, key=key))``."""

    def __init__(self, key: Callable[[Any], Any], largest: bool) -> None:
        self.key = key
        self.largest = largest

    def __call__(self, a: Any, b: Any) -> Any:
        return max(a, b, key=self.key) if self.largest else min(a, b, key=self.key)
