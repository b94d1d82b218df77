"""Compiles the logical plan (``plan.py``) into PySpark RDDs that compute the job and write its lineage.

Heads (sources, shuffle outputs, mapPartitions, coalesce, cartesian, cached RDDs) become capture
points with a table layout (``storage.layouts``); the narrow chains after them are fused into
generated stage functions (``codegen.py``); the task code at each boundary is in
``worker.boundary``. Heads are compiled once per LineageContext and reused by later actions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pyspark.core.rdd import RDD, Partitioner
from pyspark.traceback_utils import SCCallSiteSync
from pyspark.util import _parse_memory

from capture_agent.record.capture.codegen import ONE_TO_ONE, build_stage_function
from capture_agent.record.capture.pipeline import Branch, Head, Pipeline, Tail
from capture_agent.record.capture.plan import (
    CartesianNode,
    CoalesceNode,
    CombineNode,
    GroupNode,
    Node,
    PartitionsNode,
    RepartitionNode,
    ShuffleNode,
    SortWithinNode,
    SourceNode,
    ZipNode,
)
from capture_agent.record.query.call_site import CallSite
from capture_agent.record.storage.layouts import (
    FirstRestGlobal,
    FirstRestLocal,
    Layout,
    OneGlobal,
    OneLocal,
    Pair,
    SetLocal,
    SetPartition,
    Sets,
    Union,
)
from capture_agent.record.storage.manifest import CapturePoint, LineageStore
from capture_agent.record.storage.tables import TableTarget
from capture_agent.record.worker import boundary, spill
from capture_agent.record.worker.shuffle import ShuffleSpec, shuffle_spec

Replay = dict[str, tuple[RDD, str]]


def checkpoint(rdd: RDD, how: str) -> None:
    """PySpark's checkpoint (``how`` "reliable") or localCheckpoint ("local") of a head's RDD."""
    if how == "reliable":
        rdd.checkpoint()
    else:
        rdd.localCheckpoint()


class Compiler:
    """Compiles nodes of one LineageContext; heads are compiled once and reused by later actions,
    so a second action reuses Spark's shuffle files and the lineage already written."""

    def __init__(self, sc: Any, store: LineageStore, target: Callable[[CapturePoint], TableTarget]) -> None:
        self.sc = sc
        self.store = store
        self.target = target  # where a point's tasks write its tables
        self._heads: dict[int, Head] = {}
        self._unions: dict[int, CapturePoint] = {}
        # capture_id -> (rdd, reader kind) used to replay a point's values in this process
        self.replay: Replay = {}
        self.keep_aggregates = 0  # keys of map-side aggregates a combiner task keeps (0: none)

    @property
    def worker_memory_mb(self) -> float:
        """The budget a captured task keeps to and spills past: PySpark's own mergers' setting,
        read when an operator is compiled (as PySpark reads it when the operator is called), with
        the same parser, times the lineage allowance (``spill.MEMORY_FACTOR_CONF``)."""
        conf = self.sc.getConf()
        factor = float(conf.get(spill.MEMORY_FACTOR_CONF, str(spill.MEMORY_FACTOR)))
        if factor < 1.0:
            raise ValueError(f"{spill.MEMORY_FACTOR_CONF} must be 1.0 or more, not {factor}")
        return float(_parse_memory(conf.get("spark.python.worker.memory", "512m"))) * factor

    # ------------------------------------------------------------------ pipelines
    def pipeline(self, node: Node) -> Pipeline:
        if node.is_head:
            head = self.head(node)
            return Pipeline(head.point, [Branch(head, [], 0)], head.point.num_partitions)
        if node.kind == "narrow":
            return self._narrow_pipeline(node)
        if node.kind == "union":
            return self._union_pipeline(node)
        raise AssertionError(f"{node} is neither a head nor narrow")

    def _union_pipeline(self, node: Node) -> Pipeline:
        sides = [self.pipeline(p) for p in node.parents]
        point = self._unions.get(node.seq)
        if point is None:
            ranges = []
            first = 0
            for i, side in enumerate(sides):
                ranges.append([i, first, side.num_partitions])
                first += side.num_partitions
            point = self.store.new_point("union", "union", Union(ranges=ranges), [s.point for s in sides], first)
            self._unions[node.seq] = point
        branches: list[Branch] = []
        first = 0
        for side in sides:
            branches.extend(Branch(b.head, b.ops, b.offset + first) for b in side.branches)
            first += side.num_partitions
        return Pipeline(point, branches, first)

    def sink(self, pipeline: Pipeline, tail: Tail) -> RDD:
        """One generated stage function per branch; branches side by side (a plain UnionRDD).
        A tail that writes shuffle blocks yields bytes for the JVM as they are (PySpark's
        ``_bypass_serializer``, as its partitionBy)."""
        rdds = []
        for branch in pipeline.branches:
            tail.dense = branch.head.dense and all(op.template in ONE_TO_ONE for op in branch.ops)
            fn = build_stage_function(branch.head, branch.ops, tail, branch.offset)
            rdd = branch.head.rdd.mapPartitionsWithIndex(fn)
            if tail.shuffle is not None:
                rdd._bypass_serializer = True  # type: ignore[attr-defined]
                # its JVM RDD now, which makes its deserializer PySpark's no-op one: a union of map
                # sides (a join of a union) whose deserializers differed would pickle the blocks again
                rdd._jrdd  # noqa: B018
            rdds.append(rdd)
        if len(rdds) == 1:
            return rdds[0]
        return self.sc.union(rdds)

    # ------------------------------------------------------------------ heads
    def head(self, node: Node) -> Head:
        head = self._heads.get(node.seq)
        if head is None:
            with CallSite(self.sc, node.call_site):
                head = self._compile_head(node)
            if node.storage_level is not None:
                head.rdd.persist(node.storage_level)
            if node.checkpoint is not None:
                checkpoint(head.rdd, node.checkpoint)
            self._heads[node.seq] = head
        return head

    def compiled(self, node: Node) -> Head | None:
        """The head of a node whose job ran (or None)."""
        return self._heads.get(node.seq)

    def forget(self, node: Node) -> None:
        head = self._heads.pop(node.seq, None)
        if head is not None and head.rdd.is_cached:
            head.rdd.unpersist()

    def new_point(self, kind: str, op: str, layout: Layout, parents: list[CapturePoint],
                  num_partitions: int) -> tuple[CapturePoint, TableTarget]:
        """A new capture point of this run, and where its tasks write."""
        point = self.store.new_point(kind, op, layout, parents, num_partitions)
        return point, self.target(point)

    def _compile_head(self, node: Node) -> Head:
        if node.cached and node.kind in ("narrow", "union"):
            return self._stage_capture(node)
        if isinstance(node, SourceNode):
            return node.source.compile(self, node)
        if isinstance(node, CombineNode):
            return self._combine(node)
        if isinstance(node, GroupNode):
            return self._group(node)
        if isinstance(node, ShuffleNode):
            return self._shuffle(node)
        if isinstance(node, (RepartitionNode, CoalesceNode)):
            return self._regroup(node)
        if isinstance(node, (CartesianNode, ZipNode)):
            return self._pairs(node)
        if isinstance(node, PartitionsNode):
            return self._partitions(node)
        if isinstance(node, SortWithinNode):
            return self._sort_within(node)
        raise AssertionError(f"cannot compile {node}")

    def finish_head(self, head: Head) -> Head:
        """Registers a compiled head's RDD (for the coarse graph and for replaying its values)."""
        head.point.rdd_id = head.rdd.id()
        self.replay[head.point.capture_id] = (head.rdd, "pairs" if head.reader == "pairs" else "offset")
        return head

    def _stage_capture(self, node: Node) -> Head:
        pipe = self._union_pipeline(node) if node.kind == "union" else self._narrow_pipeline(node)
        point, target = self.new_point("stage", node.op, OneLocal(), [pipe.point], pipe.num_partitions)
        rdd = self.sink(pipe, Tail("pairs")).mapPartitionsWithIndex(boundary.stage_capture_agent(target))
        return self.finish_head(Head(rdd, "pairs", point, eager=False))

    def _narrow_pipeline(self, node: Node) -> Pipeline:
        parent = self.pipeline(node.parents[0])
        op = node.narrow  # type: ignore[attr-defined]
        return Pipeline(parent.point, [Branch(b.head, [*b.ops, op], b.offset) for b in parent.branches],
                        parent.num_partitions)

    def _combine(self, node: CombineNode) -> Head:
        pipe = self.pipeline(node.parents[0])
        combiner, target = self.new_point("combiner", node.op, FirstRestLocal(mode=node.mode), [pipe.point],
                                          pipe.num_partitions)
        target = replace(target, keep_aggregates=self.keep_aggregates)
        node.combiner_point = combiner.capture_id  # its kept aggregates stand in for it in what-ifs
        tail = Tail("combine", target=target, create=node.create, merge=node.merge_value,
                    memory_mb=self.worker_memory_mb * spill.MAP_SIDE, merge_combiners=node.merge_combiners)
        # the job runs the stage that writes the shuffle's blocks; what-ifs replay its records
        # from a twin that yields them (key, (value, combiner id)): the same function otherwise
        self.replay[combiner.capture_id] = (self.sink(pipe, tail), "combined")
        spec = shuffle_spec(self.sc, node.num_partitions, node.partition_func)
        map_side = self.sink(pipe, replace(tail, shuffle=spec))
        combiner.rdd_id = map_side.id()
        shuffled = self._shuffled_blocks(map_side, spec)
        reducer, target = self.new_point("reducer", node.op, FirstRestGlobal(mode=node.mode), [combiner],
                                         node.num_partitions)
        target = replace(target, keep_aggregates=self.keep_aggregates)
        node.reducer_point = reducer.capture_id  # its kept outputs are the combine's output in what-ifs
        rdd = shuffled.mapPartitionsWithIndex(boundary.combine_reducer(target, node.merge_combiners,
                                                                                self.worker_memory_mb))
        # a task that spilled yields records before its table is whole: take() drains it
        return self.finish_head(Head(rdd, "pairs", reducer, eager=False))

    def _shuffled_blocks(self, blocks: RDD, spec: ShuffleSpec) -> RDD:
        """The reducers' side of a shuffle written as blocks (``worker.shuffle``): PySpark's
        partitionBy after its ``add_shuffle_key``, read back one batch at a time."""
        jvm = self.sc._jvm
        with SCCallSiteSync(self.sc):
            pairs = jvm.PairwiseRDD(blocks._jrdd.rdd()).asJavaPairRDD()
            partitioner = jvm.PythonPartitioner(spec.num_partitions, id(spec.partition_func))
        rdd: RDD = RDD(jvm.PythonRDD.valueOfPair(pairs.partitionBy(partitioner)), self.sc, spec.serializer)
        rdd.partitioner = Partitioner(spec.num_partitions, spec.partition_func)
        return rdd

    # the capture kind and table layout of each family of group operators
    _GROUP_LAYOUT: dict[str, tuple[str, type[Layout]]] = {
        "group": ("reducer", FirstRestGlobal), "cogroup": ("reducer", Sets), "intersection": ("reducer", Sets),
        "join": ("join", Pair), "left": ("join", Pair), "right": ("join", Pair), "full": ("join", Pair),
        "subtract_by_key": ("reducer", OneGlobal), "subtract": ("reducer", OneGlobal)}

    def _group(self, node: GroupNode) -> Head:
        pipes = [self.pipeline(p) for p in node.parents]
        memory = self.worker_memory_mb * spill.MAP_SIDE
        spec = shuffle_spec(self.sc, node.num_partitions, node.partition_func)
        map_sides = [self.sink(pipe, Tail("group", side=i, memory_mb=memory, shuffle=spec))
                     for i, pipe in enumerate(pipes)]
        combined = map_sides[0] if len(map_sides) == 1 else self.sc.union(map_sides)
        shuffled = self._shuffled_blocks(combined, spec)
        kind, layout = self._GROUP_LAYOUT[node.mode]
        point, target = self.new_point(kind, node.op, layout(mode=node.mode), [p.point for p in pipes],
                                       node.num_partitions)
        if node.mode == "group":  # its kept groups are groupByKey's output in what-ifs
            target = replace(target, keep_aggregates=self.keep_aggregates)
            node.reducer_point = point.capture_id
        rdd = shuffled.mapPartitionsWithIndex(boundary.group_reducer(target, node.mode, len(pipes),
                                                                              self.worker_memory_mb))
        return self.finish_head(Head(rdd, "pairs", point, eager=False))  # as _combine: spilled tasks stream

    def _shuffle(self, node: ShuffleNode) -> Head:
        pipe = self.pipeline(node.parents[0])
        map_side = self.sink(pipe, Tail("keyed_gid"))
        shuffled = map_side.partitionBy(node.num_partitions, node.partition_func)
        point, target = self.new_point(node.capture_kind, node.op, OneGlobal(), [pipe.point], node.num_partitions)
        agent = boundary.keyed_renumber_agent(target, node.sort_key, node.ascending)
        eager = node.sort_key is not None  # partitionBy streams its records (its table comes last)
        return self.finish_head(Head(shuffled.mapPartitionsWithIndex(agent), "pairs", point, eager=eager))

    def _regroup(self, node: Node) -> Head:
        pipe = self.pipeline(node.parents[0])
        map_side = self.sink(pipe, Tail("gid"))
        if isinstance(node, RepartitionNode):
            moved = map_side.repartition(node.num_partitions)
        else:
            moved = map_side.coalesce(node.num_partitions)
        point, target = self.new_point("stage", node.op, OneGlobal(), [pipe.point], moved.getNumPartitions())
        rdd = moved.mapPartitionsWithIndex(boundary.values_renumber_agent(target))
        return self.finish_head(Head(rdd, "pairs", point, eager=False))  # streams: its table comes last

    def _pairs(self, node: CartesianNode | ZipNode) -> Head:
        """cartesian (every left record with every right one) or zip (the i-th of each side's
        partition k): PySpark's operator on the sides' (global id, value) records."""
        left, right = (self.pipeline(p) for p in node.parents)
        pairs = getattr(self.sink(left, Tail("gid")), node.op)(self.sink(right, Tail("gid")))
        point, target = self.new_point("join", node.op, Pair(mode=node.op), [left.point, right.point],
                                       node.num_partitions)
        rdd = pairs.mapPartitionsWithIndex(boundary.cartesian_agent(target))
        return self.finish_head(Head(rdd, "pairs", point, eager=False))  # streams: its table comes last

    def _partitions(self, node: PartitionsNode) -> Head:
        pipe = self.pipeline(node.parents[0])
        layout = SetPartition() if node.whole_partition else SetLocal()
        point, target = self.new_point("stage", node.op, layout, [pipe.point], pipe.num_partitions)
        agent = boundary.partitions_agent(target, node.func, node.with_index, node.whole_partition)
        rdd = self.sink(pipe, Tail("pairs")).mapPartitionsWithIndex(agent)
        return self.finish_head(Head(rdd, "pairs", point, eager=False))

    def _sort_within(self, node: SortWithinNode) -> Head:
        pipe = self.pipeline(node.parents[0])
        point, target = self.new_point("stage", node.op, OneLocal(), [pipe.point], pipe.num_partitions)
        agent = boundary.sort_within_agent(target, node.sort_key, node.ascending)
        rdd = self.sink(pipe, Tail("pairs")).mapPartitionsWithIndex(agent)
        return self.finish_head(Head(rdd, "pairs", point))

    # ------------------------------------------------------------------ outputs
    def output(self, node: Node, op: str, tail_kind: str, layout: Layout,
               limit: int = -1) -> tuple[CapturePoint, RDD, Pipeline]:
        """The sink RDD of an action and its (new) output capture point."""
        pipe = self.pipeline(node)
        point, target = self.new_point("output", op, layout, [pipe.point], pipe.num_partitions)
        rdd = self.sink(pipe, Tail(tail_kind, target=target, limit=limit, drain=not pipe.eager))
        point.rdd_id = rdd.id()
        return point, rdd, pipe
