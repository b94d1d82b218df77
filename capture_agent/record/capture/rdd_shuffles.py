"""Captured RDDs' wide operations: aggregations, joins, set operations, repartitioning, sorting.

Each builds a node of the logical plan (``plan.py``) with PySpark's partitioning rules, so a
captured job shuffles into the same partitions as the plain one.
"""

from __future__ import annotations

import bisect
import copy
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

from pyspark.core.rdd import RDD, Partitioner, portable_hash

from capture_agent.record.capture.plan import (
    CartesianNode,
    CoalesceNode,
    CombineNode,
    GroupNode,
    Node,
    RepartitionNode,
    ShuffleNode,
    SortWithinNode,
    UnionNode,
    ZipNode,
)
from capture_agent.record.capture.runtime import CaptureRuntime
from capture_agent.record.query.recipes import Recipe, Ref
from capture_agent.record.worker.functions import identity, plus_zero


def _zero_sum(zero: Any, *funcs: Any) -> bool:
    """Whether a fold's zero value is the int 0 and its functions ``operator.add``: a sum, kept by
    name (``worker.functions.plus_zero``) so that a what-if subtracts from it."""
    return type(zero) is int and zero == 0 and all(f is operator.add for f in funcs)


def _union_shape(nodes: list[Node]) -> tuple[int, Partitioner | None]:
    """Partitions and partitioner of PySpark's pairwise union (co-partitioned RDDs stay aligned)."""
    count, partitioner = nodes[0].num_partitions, nodes[0].partitioner
    for node in nodes[1:]:
        if partitioner is not None and partitioner == node.partitioner and count > 0 and node.num_partitions > 0:
            continue
        count += node.num_partitions
        partitioner = None
    return count, partitioner


class ShuffleMethods:
    """The wide operations of CapturedRDD (a mixin: ``_wrap`` and the narrow methods come from it)."""

    _rt: CaptureRuntime
    _node: Node

    if TYPE_CHECKING:  # provided by CapturedRDD
        def _wrap(self, node: Node) -> Self: ...
        def _other(self, other: Any, operation: str) -> Node: ...
        def map(self, f: Callable[[Any], Any], preservesPartitioning: bool = False) -> Self: ...
        def keyBy(self, f: Callable[[Any], Any]) -> Self: ...
        def values(self) -> Self: ...
        def plain(self) -> RDD: ...

    # ------------------------------------------------------------------ aggregations
    def combineByKey(self, createCombiner: Callable[[Any], Any], mergeValue: Callable[[Any, Any], Any],
                     mergeCombiners: Callable[[Any, Any], Any], numPartitions: int | None = None,
                     partitionFunc: Callable[[Any], int] = portable_hash) -> Self:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = Recipe(Ref(self._node), "combineByKey", createCombiner, mergeValue, mergeCombiners, numPartitions,
                       partitionFunc)
        return self._wrap(CombineNode(self._node, "combineByKey", createCombiner, mergeValue, mergeCombiners, n,
                                      partitionFunc, plain))

    def reduceByKey(self, func: Callable[[Any, Any], Any], numPartitions: int | None = None,
                    partitionFunc: Callable[[Any], int] = portable_hash) -> Self:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = Recipe(Ref(self._node), "reduceByKey", func, numPartitions, partitionFunc)
        return self._wrap(CombineNode(self._node, "reduceByKey", None, func, func, n, partitionFunc, plain))

    def aggregateByKey(self, zeroValue: Any, seqFunc: Callable[[Any, Any], Any], combFunc: Callable[[Any, Any], Any],
                       numPartitions: int | None = None,
                       partitionFunc: Callable[[Any], int] = portable_hash) -> Self:
        def create(v: Any) -> Any:
            return seqFunc(copy.deepcopy(zeroValue), v)

        first = plus_zero if _zero_sum(zeroValue, seqFunc, combFunc) else create

        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        # PySpark's aggregateByKey is this combineByKey (the zero value lives in ``create``)
        plain = Recipe(Ref(self._node), "combineByKey", first, seqFunc, combFunc, numPartitions, partitionFunc)
        return self._wrap(CombineNode(self._node, "aggregateByKey", first, seqFunc, combFunc, n, partitionFunc,
                                      plain))

    def foldByKey(self, zeroValue: Any, func: Callable[[Any, Any], Any], numPartitions: int | None = None,
                  partitionFunc: Callable[[Any], int] = portable_hash) -> Self:
        def create(v: Any) -> Any:
            return func(copy.deepcopy(zeroValue), v)

        first = plus_zero if _zero_sum(zeroValue, func) else create

        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = Recipe(Ref(self._node), "combineByKey", first, func, func, numPartitions, partitionFunc)
        return self._wrap(CombineNode(self._node, "foldByKey", first, func, func, n, partitionFunc, plain))

    def distinct(self, numPartitions: int | None = None) -> Self:
        keyed = self.map(lambda x: (x, None))
        n = numPartitions if numPartitions is not None else keyed._node.default_reduce_partitions()

        def first(x: Any, _: Any) -> Any:
            return x

        plain = Recipe(Ref(keyed._node), "reduceByKey", first, numPartitions)
        # mode "distinct": the reduced value is the key itself, whichever inputs survive a deletion
        reduced = keyed._wrap(CombineNode(keyed._node, "reduceByKey", None, first, first, n, portable_hash, plain,
                                          mode="distinct"))
        return reduced.map(lambda x: x[0])

    def groupByKey(self, numPartitions: int | None = None,
                   partitionFunc: Callable[[Any], int] = portable_hash) -> Self:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = Recipe(Ref(self._node), "groupByKey", numPartitions, partitionFunc)
        return self._wrap(GroupNode([self._node], "groupByKey", "group", n, partitionFunc, True, plain))

    def groupBy(self, f: Callable[[Any], Any], numPartitions: int | None = None,
                partitionFunc: Callable[[Any], int] = portable_hash) -> Self:
        return self.keyBy(f).groupByKey(numPartitions, partitionFunc)

    # ------------------------------------------------------------------ joins and set operations
    def _group_sides(self, op: str, mode: str, nodes: list[Node], numPartitions: int | None,
                     keeps: bool, plain: Recipe) -> Self:
        union_count, _ = _union_shape(nodes)
        if numPartitions is not None:
            n = numPartitions
        elif self._rt.sc._conf.contains("spark.default.parallelism"):
            n = int(self._rt.sc.defaultParallelism)
        else:
            n = union_count
        return self._wrap(GroupNode(nodes, op, mode, n, portable_hash, keeps, plain))

    def join(self, other: Self, numPartitions: int | None = None) -> Self:
        nodes = [self._node, self._other(other, "join")]
        return self._group_sides("join", "join", nodes, numPartitions, True,
                                 Recipe(Ref(nodes[0]), "join", Ref(nodes[1]), numPartitions))

    def leftOuterJoin(self, other: Self, numPartitions: int | None = None) -> Self:
        nodes = [self._node, self._other(other, "leftOuterJoin")]
        return self._group_sides("leftOuterJoin", "left", nodes, numPartitions, True,
                                 Recipe(Ref(nodes[0]), "leftOuterJoin", Ref(nodes[1]), numPartitions))

    def rightOuterJoin(self, other: Self, numPartitions: int | None = None) -> Self:
        nodes = [self._node, self._other(other, "rightOuterJoin")]
        return self._group_sides("rightOuterJoin", "right", nodes, numPartitions, True,
                                 Recipe(Ref(nodes[0]), "rightOuterJoin", Ref(nodes[1]), numPartitions))

    def fullOuterJoin(self, other: Self, numPartitions: int | None = None) -> Self:
        nodes = [self._node, self._other(other, "fullOuterJoin")]
        return self._group_sides("fullOuterJoin", "full", nodes, numPartitions, True,
                                 Recipe(Ref(nodes[0]), "fullOuterJoin", Ref(nodes[1]), numPartitions))

    def cogroup(self, other: Self, numPartitions: int | None = None) -> Self:
        nodes = [self._node, self._other(other, "cogroup")]
        return self._group_sides("cogroup", "cogroup", nodes, numPartitions, True,
                                 Recipe(Ref(nodes[0]), "cogroup", Ref(nodes[1]), numPartitions))

    def groupWith(self, other: Self, *others: Self) -> Self:
        nodes = [self._node, self._other(other, "groupWith"), *(self._other(o, "groupWith") for o in others)]
        return self._group_sides("groupWith", "cogroup", nodes, None, True,
                                 Recipe(Ref(nodes[0]), "groupWith", *(Ref(n) for n in nodes[1:])))

    def subtractByKey(self, other: Self, numPartitions: int | None = None) -> Self:
        nodes = [self._node, self._other(other, "subtractByKey")]
        return self._group_sides("subtractByKey", "subtract_by_key", nodes, numPartitions, True,
                                 Recipe(Ref(nodes[0]), "subtractByKey", Ref(nodes[1]), numPartitions))

    def subtract(self, other: Self, numPartitions: int | None = None) -> Self:
        self._other(other, "subtract")
        nodes = [self.map(lambda x: (x, True))._node, other.map(lambda x: (x, True))._node]
        return self._group_sides("subtract", "subtract", nodes, numPartitions, False,
                                 Recipe(Ref(self._node), "subtract", Ref(other._node), numPartitions))

    def intersection(self, other: Self) -> Self:
        self._other(other, "intersection")
        nodes = [self.map(lambda v: (v, None))._node, other.map(lambda v: (v, None))._node]
        return self._group_sides("intersection", "intersection", nodes, None, False,
                                 Recipe(Ref(self._node), "intersection", Ref(other._node)))

    def union(self, other: Self) -> Self:
        nodes = [self._node, self._other(other, "union")]
        count, partitioner = _union_shape(nodes)
        plain = Recipe(Ref(nodes[0]), "union", Ref(nodes[1]))
        virtual = UnionNode(nodes, plain)
        if partitioner is None:
            return self._wrap(virtual)
        # Co-partitioned: PySpark keeps the partitions aligned (partition k = k of each side).
        node = ShuffleNode(virtual, "union", count, partitioner.partitionFunc, None, True, True, plain,
                           capture_kind="union")
        return self._wrap(node)

    def __add__(self, other: Self) -> Self:
        if not isinstance(other, ShuffleMethods):
            raise TypeError
        return self.union(other)

    def cartesian(self, other: Self) -> Self:
        right = self._other(other, "cartesian")
        return self._wrap(CartesianNode(self._node, right, Recipe(Ref(self._node), "cartesian", Ref(right))))

    def zip(self, other: Self) -> Self:
        """PySpark's zip: both sides need as many partitions, and as many records in each."""
        right = self._other(other, "zip")
        if self._node.num_partitions != right.num_partitions:
            raise ValueError("Can only zip with RDD which has the same number of partitions")
        return self._wrap(ZipNode(self._node, right, Recipe(Ref(self._node), "zip", Ref(right))))

    # ------------------------------------------------------------------ repartitioning and sorting
    def partitionBy(self, numPartitions: int | None, partitionFunc: Callable[[Any], int] = portable_hash,
                    ) -> Self:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        if self._node.partitioner == Partitioner(n, partitionFunc):
            return self
        return self._wrap(ShuffleNode(self._node, "partitionBy", n, partitionFunc, None, True, True,
                                      Recipe(Ref(self._node), "partitionBy", numPartitions, partitionFunc)))

    def repartitionAndSortWithinPartitions(self, numPartitions: int | None = None,
                                           partitionFunc: Callable[[Any], int] = portable_hash,
                                           ascending: bool = True,
                                           keyfunc: Callable[[Any], Any] = identity) -> Self:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = Recipe(Ref(self._node), "repartitionAndSortWithinPartitions", numPartitions, partitionFunc,
                       ascending, keyfunc)
        return self._wrap(ShuffleNode(self._node, "repartitionAndSortWithinPartitions", n, partitionFunc, keyfunc,
                                      ascending, True, plain))

    def repartition(self, numPartitions: int) -> Self:
        plain = Recipe(Ref(self._node), "repartition", numPartitions)
        return self._wrap(RepartitionNode(self._node, numPartitions, plain))

    def coalesce(self, numPartitions: int, shuffle: bool = False) -> Self:
        if shuffle:
            return self.repartition(numPartitions)
        node = CoalesceNode(self._node, min(numPartitions, self._node.num_partitions),
                            Recipe(Ref(self._node), "coalesce", numPartitions))
        return self._wrap(node)

    def sortByKey(self, ascending: bool | None = True, numPartitions: int | None = None,
                  keyfunc: Callable[[Any], Any] = identity) -> Self:
        asc = bool(ascending)
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain_sort = Recipe(Ref(self._node), "sortByKey", ascending, numPartitions, keyfunc)
        if n == 1:
            source = self.coalesce(1) if self._node.num_partitions > 1 else self
            return self._wrap(SortWithinNode(source._node, keyfunc, asc, plain_sort))
        plain_parent = self._node.plain()
        size = plain_parent.count()
        if not size:
            return self
        fraction = min(n * 20.0 / max(size, 1), 1.0)
        samples = sorted(plain_parent.sample(False, fraction, 1).map(lambda kv: kv[0]).collect(), key=keyfunc)
        bounds = [samples[int(len(samples) * (i + 1) / n)] for i in range(0, n - 1)]

        def rangePartitioner(k: Any) -> int:
            p = bisect.bisect_left(bounds, keyfunc(k))
            return p if asc else n - 1 - p

        return self._wrap(ShuffleNode(self._node, "sortByKey", n, rangePartitioner, keyfunc, asc, True, plain_sort))

    def sortBy(self, keyfunc: Callable[[Any], Any], ascending: bool = True,
               numPartitions: int | None = None) -> Self:
        return self.keyBy(keyfunc).sortByKey(ascending, numPartitions).values()
