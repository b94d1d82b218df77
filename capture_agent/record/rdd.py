"""CapturedRDD: an RDD whose jobs capture record-level lineage.

Every method has PySpark's signature and returns what PySpark returns. Transformations build the
logical plan (``plan.py``); actions compile it (``compile.py``), run it, and register an output
capture point; ``getLineage()`` starts a trace at the last action's output. A method PySpark
offers but this class does not raises ``UnsupportedOperation`` naming it.
"""

from __future__ import annotations

import bisect
import copy
import itertools
import random
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pyspark import StorageLevel
from pyspark.core.rdd import RDD, Partitioner, portable_hash
from pyspark.rddsampler import RDDRangeSampler, RDDSampler, RDDStratifiedSampler

from capture_agent.record.errors import UnsupportedOperation
from capture_agent.record.plan import (
    CartesianNode,
    CoalesceNode,
    CombineNode,
    GroupNode,
    NarrowNode,
    NarrowOp,
    Node,
    PartitionsNode,
    RepartitionNode,
    ShuffleNode,
    SortWithinNode,
    UnionNode,
)
from capture_agent.record.rdd_actions import ActionMethods

if TYPE_CHECKING:
    from capture_agent.record.context import LineageContext


def _identity(x: Any) -> Any:
    return x


def _pipe_function(command: str, env: dict[str, str], check_code: bool) -> Callable[[Iterable[Any]], Iterable[str]]:
    """The partition function of PySpark's RDD.pipe."""

    def func(iterator: Iterable[Any]) -> Iterable[str]:
        import shlex
        from subprocess import PIPE, Popen
        from threading import Thread

        process = Popen(shlex.split(command), env=env, stdin=PIPE, stdout=PIPE)

        def feed(out: Any) -> None:
            for obj in iterator:
                out.write((str(obj).rstrip("\n") + "\n").encode("utf-8"))
            out.close()

        Thread(target=feed, args=[process.stdin]).start()

        def check_return_code() -> Iterable[bytes]:
            process.wait()
            if check_code and process.returncode:
                from pyspark.errors import PySparkRuntimeError

                raise PySparkRuntimeError(errorClass="PIPE_FUNCTION_EXITED",
                                          messageParameters={"func_name": command,
                                                             "error_code": str(process.returncode)})
            yield from ()

        return (x.rstrip(b"\n").decode("utf-8")
                for x in itertools.chain(iter(process.stdout.readline, b""), check_return_code()))

    return func


def _whole_partition(lineage: str) -> bool:
    if lineage not in ("interval", "partition"):
        raise ValueError(f"lineage must be 'interval' or 'partition', not {lineage!r}")
    return lineage == "partition"


def _union_shape(nodes: list[Node]) -> tuple[int, Partitioner | None]:
    """Partitions and partitioner of PySpark's pairwise union (co-partitioned RDDs stay aligned)."""
    count, partitioner = nodes[0].num_partitions, nodes[0].partitioner
    for node in nodes[1:]:
        if partitioner is not None and partitioner == node.partitioner and count > 0 and node.num_partitions > 0:
            continue
        count += node.num_partitions
        partitioner = None
    return count, partitioner


class CapturedRDD(ActionMethods):
    """An RDD of a LineageContext: PySpark's API, with record-level lineage captured."""

    def __init__(self, lc: LineageContext, node: Node) -> None:
        self._lc = lc
        self._node = node

    # ------------------------------------------------------------------ basics
    @property
    def context(self) -> Any:
        return self._lc.sc

    ctx = context

    @property
    def lineage_context(self) -> LineageContext:
        return self._lc

    @property
    def partitioner(self) -> Partitioner | None:
        return self._node.partitioner

    def getNumPartitions(self) -> int:
        return self._node.num_partitions

    def id(self) -> int:
        return self._node.seq

    def plain(self) -> RDD:
        """The same computation as a plain PySpark RDD, without capture."""
        return self._node.plain()

    def cache(self) -> CapturedRDD:
        return self.persist(StorageLevel.MEMORY_ONLY)

    def persist(self, storageLevel: StorageLevel = StorageLevel.MEMORY_ONLY) -> CapturedRDD:
        if self._node.storage_level is None:
            self._node.storage_level = storageLevel
        return self

    def unpersist(self, blocking: bool = False) -> CapturedRDD:
        self._node.storage_level = None
        self._lc.compiler.forget(self._node)
        return self

    @property
    def is_cached(self) -> bool:
        return self._node.cached

    def isCheckpointed(self) -> bool:
        return False

    def isLocallyCheckpointed(self) -> bool:
        return False

    def getCheckpointFile(self) -> str | None:
        return None

    def getStorageLevel(self) -> StorageLevel:
        return self._node.storage_level or StorageLevel(False, False, False, False)

    def __repr__(self) -> str:
        return f"CapturedRDD[{self._node.seq}] {self._node.op}"

    def name(self) -> str | None:
        return getattr(self._node, "name", None)

    def setName(self, name: str) -> CapturedRDD:
        self._node.name = name  # type: ignore[attr-defined]
        return self

    def toDebugString(self) -> bytes:
        """The captured plan, one node per line (heads start the stages that capture lineage)."""
        lines: list[str] = []

        def walk(node: Node, depth: int) -> None:
            mark = "*" if node.is_head else " "
            lines.append(f"{'  ' * depth}{mark}({node.num_partitions}) {node.op} [{node.kind} #{node.seq}]")
            for parent in node.parents:
                walk(parent, depth + 1)

        walk(self._node, 0)
        return "\n".join(lines).encode("utf-8")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if hasattr(RDD, name):
            raise UnsupportedOperation(name, "use .plain() to run it without lineage")
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def _wrap(self, node: Node) -> CapturedRDD:
        return CapturedRDD(self._lc, node)

    def _other(self, other: Any, operation: str) -> Node:
        if not isinstance(other, CapturedRDD):
            raise UnsupportedOperation(operation, "both RDDs must come from the same LineageContext "
                                       f"(got {type(other).__name__})")
        if other._lc is not self._lc:
            raise UnsupportedOperation(operation, "the RDDs belong to different LineageContexts")
        return other._node

    # ------------------------------------------------------------------ narrow
    def _narrow(self, name: str, template: str, func: Any, preserves: bool,
                plain: Callable[[RDD], RDD], bound: bool = False) -> CapturedRDD:
        op = NarrowOp(name, template, func, bound)
        return self._wrap(NarrowNode(self._node, op, preserves, lambda ps: plain(ps[0])))

    def map(self, f: Callable[[Any], Any], preservesPartitioning: bool = False) -> CapturedRDD:
        return self._narrow("map", "map", f, preservesPartitioning, lambda r: r.map(f, preservesPartitioning))

    def flatMap(self, f: Callable[[Any], Iterable[Any]], preservesPartitioning: bool = False) -> CapturedRDD:
        return self._narrow("flatMap", "flat", f, preservesPartitioning,
                            lambda r: r.flatMap(f, preservesPartitioning))

    def filter(self, f: Callable[[Any], bool]) -> CapturedRDD:
        return self._narrow("filter", "filter", f, True, lambda r: r.filter(f))

    def mapValues(self, f: Callable[[Any], Any]) -> CapturedRDD:
        return self._narrow("mapValues", "mapValues", f, True, lambda r: r.mapValues(f))

    def flatMapValues(self, f: Callable[[Any], Iterable[Any]]) -> CapturedRDD:
        return self._narrow("flatMapValues", "flatMapValues", f, True, lambda r: r.flatMapValues(f))

    def keyBy(self, f: Callable[[Any], Any]) -> CapturedRDD:
        return self._narrow("keyBy", "keyBy", f, False, lambda r: r.keyBy(f))

    def keys(self) -> CapturedRDD:
        return self._narrow("keys", "keys", None, False, lambda r: r.keys())

    def values(self) -> CapturedRDD:
        return self._narrow("values", "values", None, False, lambda r: r.values())

    def sample(self, withReplacement: bool, fraction: float, seed: int | None = None) -> CapturedRDD:
        if not fraction >= 0:
            raise ValueError("Fraction must be nonnegative.")
        if seed is None:
            seed = random.randint(0, sys.maxsize)
        sampler = RDDSampler(withReplacement, fraction, seed)

        def bind(split: int) -> Callable[[Any], Any]:
            bound = copy.copy(sampler)
            bound.initRandomGenerator(split)
            if withReplacement:
                return lambda x: [x] * bound.getPoissonSample(fraction)
            uniform = bound.getUniformSample
            return lambda x: uniform() < fraction

        template = "flat" if withReplacement else "filter"
        return self._narrow("sample", template, bind, True, lambda r: r.sample(withReplacement, fraction, seed),
                            bound=True)

    def randomSplit(self, weights: list[float], seed: int | None = None) -> list[CapturedRDD]:
        if not all(w >= 0 for w in weights):
            raise ValueError("Weights must be nonnegative")
        total = float(sum(weights))
        if not total > 0:
            raise ValueError("Sum of weights must be positive")
        bounds = [0.0]
        for w in weights:
            bounds.append(bounds[-1] + w / total)
        if seed is None:
            seed = random.randint(0, 2**32 - 1)
        chosen_seed = seed

        def split_between(lower: float, upper: float) -> CapturedRDD:
            sampler = RDDRangeSampler(lower, upper, chosen_seed)

            def bind(split: int) -> Callable[[Any], bool]:
                bound = copy.copy(sampler)
                bound.initRandomGenerator(split)
                uniform = bound.getUniformSample
                return lambda x: lower <= uniform() < upper

            def plain(r: RDD) -> RDD:
                return r.mapPartitionsWithIndex(RDDRangeSampler(lower, upper, chosen_seed).func, True)

            return self._narrow("randomSplit", "filter", bind, True, plain, bound=True)

        return [split_between(lb, ub) for lb, ub in zip(bounds, bounds[1:], strict=False)]

    def sampleByKey(self, withReplacement: bool, fractions: dict[Any, float], seed: int | None = None,
                    ) -> CapturedRDD:
        for fraction in fractions.values():
            assert fraction >= 0.0, f"Negative fraction value: {fraction}"
        sampler = RDDStratifiedSampler(withReplacement, fractions, seed)

        def bind(split: int) -> Callable[[Any], Any]:
            bound = copy.copy(sampler)
            bound.initRandomGenerator(split)
            if withReplacement:
                return lambda kv: [kv] * bound.getPoissonSample(fractions[kv[0]])
            uniform = bound.getUniformSample
            return lambda kv: uniform() < fractions[kv[0]]

        return self._narrow("sampleByKey", "flat" if withReplacement else "filter", bind, True,
                            lambda r: r.mapPartitionsWithIndex(sampler.func, True), bound=True)

    def zipWithUniqueId(self) -> CapturedRDD:
        n = self._node.num_partitions

        def bind(split: int) -> Callable[[Any], Any]:
            counter = itertools.count()
            return lambda v: (v, next(counter) * n + split)

        return self._narrow("zipWithUniqueId", "map", bind, False, lambda r: r.zipWithUniqueId(), bound=True)

    def zipWithIndex(self) -> CapturedRDD:
        starts = [0]
        if self._node.num_partitions > 1:
            nums = self._node.plain().mapPartitions(lambda it: [sum(1 for _ in it)]).collect()
            for count in nums[:-1]:
                starts.append(starts[-1] + count)

        def bind(split: int) -> Callable[[Any], Any]:
            counter = itertools.count(starts[split])
            return lambda v: (v, next(counter))

        return self._narrow("zipWithIndex", "map", bind, False, lambda r: r.zipWithIndex(), bound=True)

    def mapPartitions(self, f: Callable[[Iterable[Any]], Iterable[Any]], preservesPartitioning: bool = False,
                      *, lineage: str = "interval") -> CapturedRDD:
        """PySpark's mapPartitions. ``lineage="interval"`` (default): an output comes from the
        inputs pulled since the previous output; ``"partition"``: from every input of its partition."""
        return self._wrap(PartitionsNode(self._node, "mapPartitions", f, False, preservesPartitioning,
                                         lambda ps: ps[0].mapPartitions(f, preservesPartitioning),
                                         _whole_partition(lineage)))

    def mapPartitionsWithIndex(self, f: Callable[[int, Iterable[Any]], Iterable[Any]],
                               preservesPartitioning: bool = False, *, lineage: str = "interval") -> CapturedRDD:
        return self._wrap(PartitionsNode(self._node, "mapPartitionsWithIndex", f, True, preservesPartitioning,
                                         lambda ps: ps[0].mapPartitionsWithIndex(f, preservesPartitioning),
                                         _whole_partition(lineage)))

    mapPartitionsWithSplit = mapPartitionsWithIndex

    def pipe(self, command: str, env: dict[str, str] | None = None, checkCode: bool = False) -> CapturedRDD:
        """PySpark's pipe; an output line of the command comes from every input of its partition."""
        func = _pipe_function(command, env or {}, checkCode)
        return self._wrap(PartitionsNode(self._node, "pipe", func, False, False,
                                         lambda ps: ps[0].pipe(command, env, checkCode), True))

    def glom(self) -> CapturedRDD:
        def func(iterator: Iterable[Any]) -> Iterable[list[Any]]:
            yield list(iterator)

        return self._wrap(PartitionsNode(self._node, "glom", func, False, False, lambda ps: ps[0].glom()))

    # ------------------------------------------------------------------ aggregations
    def combineByKey(self, createCombiner: Callable[[Any], Any], mergeValue: Callable[[Any, Any], Any],
                     mergeCombiners: Callable[[Any, Any], Any], numPartitions: int | None = None,
                     partitionFunc: Callable[[Any], int] = portable_hash) -> CapturedRDD:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = lambda ps: ps[0].combineByKey(createCombiner, mergeValue, mergeCombiners,  # noqa: E731
                                              numPartitions, partitionFunc)
        return self._wrap(CombineNode(self._node, "combineByKey", createCombiner, mergeValue, mergeCombiners, n,
                                      partitionFunc, plain))

    def reduceByKey(self, func: Callable[[Any, Any], Any], numPartitions: int | None = None,
                    partitionFunc: Callable[[Any], int] = portable_hash) -> CapturedRDD:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = lambda ps: ps[0].reduceByKey(func, numPartitions, partitionFunc)  # noqa: E731
        return self._wrap(CombineNode(self._node, "reduceByKey", None, func, func, n, partitionFunc, plain))

    def aggregateByKey(self, zeroValue: Any, seqFunc: Callable[[Any, Any], Any], combFunc: Callable[[Any, Any], Any],
                       numPartitions: int | None = None,
                       partitionFunc: Callable[[Any], int] = portable_hash) -> CapturedRDD:
        def create(v: Any) -> Any:
            return seqFunc(copy.deepcopy(zeroValue), v)

        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = lambda ps: ps[0].aggregateByKey(zeroValue, seqFunc, combFunc,  # noqa: E731
                                                numPartitions, partitionFunc)
        return self._wrap(CombineNode(self._node, "aggregateByKey", create, seqFunc, combFunc, n, partitionFunc,
                                      plain))

    def foldByKey(self, zeroValue: Any, func: Callable[[Any, Any], Any], numPartitions: int | None = None,
                  partitionFunc: Callable[[Any], int] = portable_hash) -> CapturedRDD:
        def create(v: Any) -> Any:
            return func(copy.deepcopy(zeroValue), v)

        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = lambda ps: ps[0].foldByKey(zeroValue, func, numPartitions, partitionFunc)  # noqa: E731
        return self._wrap(CombineNode(self._node, "foldByKey", create, func, func, n, partitionFunc, plain))

    def distinct(self, numPartitions: int | None = None) -> CapturedRDD:
        return self.map(lambda x: (x, None)).reduceByKey(lambda x, _: x, numPartitions).map(lambda x: x[0])

    def groupByKey(self, numPartitions: int | None = None,
                   partitionFunc: Callable[[Any], int] = portable_hash) -> CapturedRDD:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = lambda ps: ps[0].groupByKey(numPartitions, partitionFunc)  # noqa: E731
        return self._wrap(GroupNode([self._node], "groupByKey", "group", n, partitionFunc, True, plain))

    def groupBy(self, f: Callable[[Any], Any], numPartitions: int | None = None,
                partitionFunc: Callable[[Any], int] = portable_hash) -> CapturedRDD:
        return self.keyBy(f).groupByKey(numPartitions, partitionFunc)

    # ------------------------------------------------------------------ joins and set operations
    def _group_sides(self, op: str, mode: str, nodes: list[Node], numPartitions: int | None,
                     keeps: bool, plain: Callable[[list[RDD]], RDD]) -> CapturedRDD:
        union_count, _ = _union_shape(nodes)
        if numPartitions is not None:
            n = numPartitions
        elif self._lc.sc._conf.contains("spark.default.parallelism"):
            n = int(self._lc.sc.defaultParallelism)
        else:
            n = union_count
        return self._wrap(GroupNode(nodes, op, mode, n, portable_hash, keeps, plain))

    def join(self, other: CapturedRDD, numPartitions: int | None = None) -> CapturedRDD:
        nodes = [self._node, self._other(other, "join")]
        return self._group_sides("join", "join", nodes, numPartitions, True,
                                 lambda ps: ps[0].join(ps[1], numPartitions))

    def leftOuterJoin(self, other: CapturedRDD, numPartitions: int | None = None) -> CapturedRDD:
        nodes = [self._node, self._other(other, "leftOuterJoin")]
        return self._group_sides("leftOuterJoin", "left", nodes, numPartitions, True,
                                 lambda ps: ps[0].leftOuterJoin(ps[1], numPartitions))

    def rightOuterJoin(self, other: CapturedRDD, numPartitions: int | None = None) -> CapturedRDD:
        nodes = [self._node, self._other(other, "rightOuterJoin")]
        return self._group_sides("rightOuterJoin", "right", nodes, numPartitions, True,
                                 lambda ps: ps[0].rightOuterJoin(ps[1], numPartitions))

    def fullOuterJoin(self, other: CapturedRDD, numPartitions: int | None = None) -> CapturedRDD:
        nodes = [self._node, self._other(other, "fullOuterJoin")]
        return self._group_sides("fullOuterJoin", "full", nodes, numPartitions, True,
                                 lambda ps: ps[0].fullOuterJoin(ps[1], numPartitions))

    def cogroup(self, other: CapturedRDD, numPartitions: int | None = None) -> CapturedRDD:
        nodes = [self._node, self._other(other, "cogroup")]
        return self._group_sides("cogroup", "cogroup", nodes, numPartitions, True,
                                 lambda ps: ps[0].cogroup(ps[1], numPartitions))

    def groupWith(self, other: CapturedRDD, *others: CapturedRDD) -> CapturedRDD:
        nodes = [self._node, self._other(other, "groupWith"), *(self._other(o, "groupWith") for o in others)]
        return self._group_sides("groupWith", "cogroup", nodes, None, True,
                                 lambda ps: ps[0].groupWith(ps[1], *ps[2:]))

    def subtractByKey(self, other: CapturedRDD, numPartitions: int | None = None) -> CapturedRDD:
        nodes = [self._node, self._other(other, "subtractByKey")]
        return self._group_sides("subtractByKey", "subtract_by_key", nodes, numPartitions, True,
                                 lambda ps: ps[0].subtractByKey(ps[1], numPartitions))

    def subtract(self, other: CapturedRDD, numPartitions: int | None = None) -> CapturedRDD:
        self._other(other, "subtract")
        nodes = [self.map(lambda x: (x, True))._node, other.map(lambda x: (x, True))._node]
        result = self._group_sides("subtract", "subtract", nodes, numPartitions, False,
                                   lambda ps: ps[0].subtractByKey(ps[1], numPartitions).keys())
        result._node._plain_builder = lambda ps, o=other: self.plain().subtract(o.plain(), numPartitions)
        return result

    def intersection(self, other: CapturedRDD) -> CapturedRDD:
        self._other(other, "intersection")
        nodes = [self.map(lambda v: (v, None))._node, other.map(lambda v: (v, None))._node]
        result = self._group_sides("intersection", "intersection", nodes, None, False, lambda ps: ps[0])
        result._node._plain_builder = lambda ps, o=other: self.plain().intersection(o.plain())
        return result

    def union(self, other: CapturedRDD) -> CapturedRDD:
        nodes = [self._node, self._other(other, "union")]
        count, partitioner = _union_shape(nodes)
        virtual = UnionNode(nodes, lambda ps: ps[0].union(ps[1]))
        if partitioner is None:
            return self._wrap(virtual)
        # Co-partitioned: PySpark keeps the partitions aligned (partition k = k of each side).
        node = ShuffleNode(virtual, "union", count, partitioner.partitionFunc, None, True, True,
                           lambda ps, a=self, b=other: a.plain().union(b.plain()), capture_kind="union")
        return self._wrap(node)

    def __add__(self, other: CapturedRDD) -> CapturedRDD:
        if not isinstance(other, CapturedRDD):
            raise TypeError
        return self.union(other)

    def cartesian(self, other: CapturedRDD) -> CapturedRDD:
        right = self._other(other, "cartesian")
        return self._wrap(CartesianNode(self._node, right, lambda ps: ps[0].cartesian(ps[1])))

    # ------------------------------------------------------------------ repartitioning and sorting
    def partitionBy(self, numPartitions: int | None, partitionFunc: Callable[[Any], int] = portable_hash,
                    ) -> CapturedRDD:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        if self._node.partitioner == Partitioner(n, partitionFunc):
            return self
        return self._wrap(ShuffleNode(self._node, "partitionBy", n, partitionFunc, None, True, True,
                                      lambda ps: ps[0].partitionBy(numPartitions, partitionFunc)))

    def repartitionAndSortWithinPartitions(self, numPartitions: int | None = None,
                                           partitionFunc: Callable[[Any], int] = portable_hash,
                                           ascending: bool = True,
                                           keyfunc: Callable[[Any], Any] = lambda x: x) -> CapturedRDD:
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain = lambda ps: ps[0].repartitionAndSortWithinPartitions(  # noqa: E731
            numPartitions, partitionFunc, ascending, keyfunc)
        return self._wrap(ShuffleNode(self._node, "repartitionAndSortWithinPartitions", n, partitionFunc, keyfunc,
                                      ascending, True, plain))

    def repartition(self, numPartitions: int) -> CapturedRDD:
        return self._wrap(RepartitionNode(self._node, numPartitions, lambda ps: ps[0].repartition(numPartitions)))

    def coalesce(self, numPartitions: int, shuffle: bool = False) -> CapturedRDD:
        if shuffle:
            return self.repartition(numPartitions)
        node = CoalesceNode(self._node, min(numPartitions, self._node.num_partitions),
                            lambda ps: ps[0].coalesce(numPartitions))
        return self._wrap(node)

    def sortByKey(self, ascending: bool | None = True, numPartitions: int | None = None,
                  keyfunc: Callable[[Any], Any] = lambda x: x) -> CapturedRDD:
        asc = bool(ascending)
        n = numPartitions if numPartitions is not None else self._node.default_reduce_partitions()
        plain_sort = lambda ps: ps[0].sortByKey(ascending, numPartitions, keyfunc)  # noqa: E731
        if n == 1:
            source = self.coalesce(1) if self._node.num_partitions > 1 else self
            node = SortWithinNode(source._node, keyfunc, asc, lambda ps: ps[0])
            node._plain_builder = lambda ps: plain_sort([self._node.plain()])
            return self._wrap(node)
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
               numPartitions: int | None = None) -> CapturedRDD:
        return self.keyBy(keyfunc).sortByKey(ascending, numPartitions).values()
