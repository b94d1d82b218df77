"""Compiles the logical plan into PySpark RDDs that compute the job and write its lineage.

A *head* (source, shuffle output, mapPartitions, coalesce, cartesian, cached RDD) yields its
records with their position: ``(offset, line)`` for text, ``(position, value)`` otherwise. A
*pipeline* is a head (or several, side by side under a union) followed by narrow operators. A
*sink* ends a pipeline: it becomes ONE generated Python function per branch, run with
``mapPartitionsWithIndex``, that loops over the head's records, applies the fused operators
inline and hands each result with its input position to the tail (collect, count, map-side
combine, group, shuffle...). Positions live in ``array('I')``; nothing is materialised per
operator, and each tail writes its partition's association table once, at the end.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pyspark.core.rdd import RDD

from capture_agent.record import _agents as agents
from capture_agent.record import _runtime as rt
from capture_agent.record.plan import (
    CartesianNode,
    CoalesceNode,
    CombineNode,
    GroupNode,
    NarrowOp,
    Node,
    PartitionsNode,
    RepartitionNode,
    ShuffleNode,
    SortWithinNode,
    SourceNode,
)
from capture_agent.record.store import CapturePoint

if TYPE_CHECKING:
    from capture_agent.record.context import LineageContext


@dataclass
class Head:
    """A compiled head: its RDD, how to read (position, value) from it, its capture point."""

    rdd: RDD
    reader: str  # "offset": (byte offset, line) pairs; "pairs": (position, value) pairs
    point: CapturePoint
    bases: list[int] | None = None
    encode: bool = False  # textFile(use_unicode=False)
    input_location: str = ""  # "offset" reader: where the stage keeps each line's byte offset
    eager: bool = True  # its table is complete before its first record is yielded (or it has none)
    dense: bool = True  # positions are 0, 1, 2... in the order records are yielded


@dataclass
class Branch:
    head: Head
    ops: list[NarrowOp]
    offset: int  # first partition of this branch in the pipeline's partition space


@dataclass
class Pipeline:
    """Records of a narrow chain, with positions relative to ``point`` (a head or a union)."""

    point: CapturePoint
    branches: list[Branch]
    num_partitions: int

    @property
    def eager(self) -> bool:
        return all(b.head.eager for b in self.branches)


@dataclass
class Tail:
    """How a stage function ends; see ``_tail_code``."""

    kind: str
    location: str = ""
    limit: int = -1
    drain: bool = True
    side: int = 0
    create: Callable[[Any], Any] | None = None
    merge: Callable[[Any, Any], Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


_ONE_TO_ONE = ("map", "mapValues", "keyBy", "keys", "values")

_RUNTIME_NAMES = {
    "array": array,
    "LimitReached": rt.LimitReached,
    "finish_one_local": rt.finish_one_local,
    "finish_single": rt.finish_single,
    "finish_save": rt.finish_save,
    "finish_combiner": rt.finish_combiner,
    "finish_group": rt.finish_group,
    "finish_text_input": rt.finish_text_input,
}


def _tail_code(tail: Tail, v: str) -> tuple[list[str], list[str], list[str]]:
    """(prologue, body, epilogue) lines of a tail; ``v`` is the record, ``pos`` its position."""
    kind = tail.kind
    if kind == "records":
        pro = ["poss = array('I')", "ap = poss.append", "n = 0"]
        if tail.limit < 0:
            body = ["ap(pos)", f"yield {v}"]
        elif tail.drain:
            body = ["if n < LIMIT:", "    ap(pos)", "    n += 1", f"    yield {v}"]
        else:
            body = ["if n == LIMIT:", "    raise LimitReached()", "ap(pos)", "n += 1", f"yield {v}"]
        return pro, body, ["finish_one_local(LOC, tpart, poss)"]
    if kind == "count":
        return (["poss = array('I')", "ap = poss.append"], ["ap(pos)"],
                ["finish_single(LOC, tpart, poss)", "yield len(poss)"])
    if kind == "consume":
        return (["poss = array('I')", "ap = poss.append"], ["ap(pos)", f"yield {v}"],
                ["finish_single(LOC, tpart, poss)"])
    if kind == "save":
        pro = ["offs = array('q')", "poss = array('I')", "ao = offs.append", "ap = poss.append", "o = 0"]
        body = [f"x = {v}",
                "if not isinstance(x, bytes):",
                "    x = x.encode('utf-8') if isinstance(x, str) else str(x).encode('utf-8')",
                "ao(o)", "ap(pos)", "o += len(x) + 1", "yield x"]
        return pro, body, ["finish_save(LOC, tpart, offs, poss)"]
    if kind == "pairs":
        return [], [f"yield (pos, {v})"], []
    if kind == "gid":
        return ["hi = tpart << 32"], [f"yield (hi | pos, {v})"], []
    if kind == "keyed_gid":
        return ["hi = tpart << 32"], [f"kk, xx = {v}", "yield (kk, (xx, hi | pos))"], []
    # combine and group: each record appends its key's slot (first-seen order) and its position to
    # two flat arrays; the positions of each key are grouped once, at the end (appending to one
    # array per key costs more: 50,000 keys' arrays are scattered in memory).
    dense = tail.extra.get("dense", False)  # position == record index: no position array needed
    keep = [] if dense else ["keep_pos(pos)"]
    poss = "None" if dense else "poss"
    if kind == "combine":
        first = "create(xx)" if tail.create is not None else "xx"
        body = [f"kk, xx = {v}",
                "j = get(kk)",
                "if j is None:",
                "    j = d[kk] = len(vals)",
                f"    new_key({first})",
                "else:",
                "    vals[j] = merge(vals[j], xx)",
                "keep_slot(j)", *keep]
        prologue = ["d = {}", "get = d.get", "vals = []", "new_key = vals.append", "slots = array('I')",
                    "keep_slot = slots.append", "poss = array('I')", "keep_pos = poss.append", "merge = MERGE",
                    "create = CREATE"]
        return prologue, body, [f"yield from finish_combiner(LOC, tpart, d, vals, slots, {poss})"]
    if kind == "group":
        body = [f"kk, xx = {v}",
                "j = get(kk)",
                "if j is None:",
                "    j = d[kk] = len(vals)",
                "    new_key([xx])",
                "else:",
                "    vals[j].append(xx)",
                "keep_slot(j)", *keep]
        prologue = ["d = {}", "get = d.get", "vals = []", "new_key = vals.append", "slots = array('I')",
                    "keep_slot = slots.append", "poss = array('I')", "keep_pos = poss.append"]
        return prologue, body, [f"yield from finish_group(tpart, SIDE, d, vals, slots, {poss})"]
    raise ValueError(f"unknown tail {kind}")


def build_stage_function(head: Head, ops: list[NarrowOp], tail: Tail, offset: int) -> Callable[..., Any]:
    """Generates the fused stage function of one branch (see the module docstring)."""
    ns: dict[str, Any] = dict(_RUNTIME_NAMES)
    ns.update(OFFSET=offset, BASES=head.bases, LOC=tail.location, LIMIT=tail.limit, SIDE=tail.side,
              CREATE=tail.create, MERGE=tail.merge, INPUT_LOC=head.input_location)
    lines: list[str] = ["def stage(split, iterator):", "    tpart = split + OFFSET"]

    def emit(level: int, text: str) -> None:
        lines.append("    " * level + text)

    text = head.reader == "offset"
    if text:
        # A line's position is its number in the split; its byte offset goes to the input table.
        emit(1, "base = BASES[split]")
        emit(1, "offs = array('q')")
        emit(1, "keep_offset = offs.append")
        emit(1, "pos = -1")
        emit(1, "complete = False")
    for i, op in enumerate(ops):
        ns[f"F{i}"] = op.func
        emit(1, f"f{i} = F{i}(split)" if op.bound else f"f{i} = F{i}")
    cur = "v0"
    prologue, body, epilogue = _tail_code(tail, "{v}")
    for line in prologue:
        emit(1, line)
    top = 2 if text else 1
    if text:
        emit(1, "try:")
    emit(top, "try:")
    if text:
        emit(top + 1, "for off, v0 in iterator:")
        emit(top + 2, "pos += 1")
        emit(top + 2, "keep_offset(off)")
        if head.encode:
            emit(top + 2, "v0 = v0.encode('utf-8')")
    else:
        emit(top + 1, "for pos, v0 in iterator:")
    level = top + 2
    for i, op in enumerate(ops):
        nxt = f"v{i + 1}"
        t = op.template
        if t == "map":
            emit(level, f"{nxt} = f{i}({cur})")
        elif t == "filter":
            emit(level, f"if not f{i}({cur}):")
            emit(level + 1, "continue")
            nxt = cur
        elif t == "flat":
            emit(level, f"for {nxt} in f{i}({cur}):")
            level += 1
        elif t == "mapValues":
            emit(level, f"{nxt} = ({cur}[0], f{i}({cur}[1]))")
        elif t == "flatMapValues":
            emit(level, f"for x{i} in f{i}({cur}[1]):")
            level += 1
            emit(level, f"{nxt} = ({cur}[0], x{i})")
        elif t == "keyBy":
            emit(level, f"{nxt} = (f{i}({cur}), {cur})")
        elif t == "keys":
            emit(level, f"{nxt} = {cur}[0]")
        elif t == "values":
            emit(level, f"{nxt} = {cur}[1]")
        else:  # pragma: no cover
            raise ValueError(f"unknown narrow template {t}")
        cur = nxt
    for line in body:
        emit(level, line.replace("{v}", cur))
    if text:
        emit(top + 1, "complete = True")
    emit(top, "except LimitReached:")
    emit(top + 1, "pass")
    if text:
        emit(1, "finally:")
        emit(2, "finish_text_input(INPUT_LOC, split, offs, complete, base)")
    for line in epilogue:
        emit(1, line)
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<lineage stage {tail.kind}>", "exec"), ns)  # noqa: S102 - our own generated code
    fn = ns["stage"]
    fn.__qualname__ = fn.__name__ = f"lineage_stage_{tail.kind}"
    fn.__doc__ = source
    return fn


class Compiler:
    """Compiles nodes of one LineageContext; heads are compiled once and reused by later actions,
    so a second action reuses Spark's shuffle files and the lineage already written."""

    def __init__(self, lc: LineageContext) -> None:
        self.lc = lc
        self.sc = lc.sc
        self._heads: dict[int, Head] = {}
        self._unions: dict[int, CapturePoint] = {}
        # capture_id -> (rdd, reader kind) used to replay a point's values in this process
        self.replay: dict[str, tuple[RDD, str]] = {}

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
            point = self.lc.store.new_point("union", "union", "union", [s.point for s in sides], first,
                                            {"ranges": ranges})
            self._unions[node.seq] = point
        branches: list[Branch] = []
        first = 0
        for side in sides:
            branches.extend(Branch(b.head, b.ops, b.offset + first) for b in side.branches)
            first += side.num_partitions
        return Pipeline(point, branches, first)

    def sink(self, pipeline: Pipeline, tail: Tail) -> RDD:
        """One generated stage function per branch; branches side by side (a plain UnionRDD)."""
        rdds = []
        for branch in pipeline.branches:
            one_to_one = branch.head.dense and all(op.template in _ONE_TO_ONE for op in branch.ops)
            tail.extra["dense"] = one_to_one
            fn = build_stage_function(branch.head, branch.ops, tail, branch.offset)
            rdds.append(branch.head.rdd.mapPartitionsWithIndex(fn))
        if len(rdds) == 1:
            return rdds[0]
        return self.sc.union(rdds)

    # ------------------------------------------------------------------ heads
    def head(self, node: Node) -> Head:
        head = self._heads.get(node.seq)
        if head is None:
            head = self._compile_head(node)
            if node.cached:
                head.rdd.persist(node.storage_level)
            self._heads[node.seq] = head
        return head

    def forget(self, node: Node) -> None:
        head = self._heads.pop(node.seq, None)
        if head is not None and head.rdd.is_cached:
            head.rdd.unpersist()

    def _new_point(self, kind: str, node: Node, layout: str, parents: list[CapturePoint], num_partitions: int,
                   extra: dict[str, Any] | None = None) -> CapturePoint:
        return self.lc.store.new_point(kind, node.op, layout, parents, num_partitions, extra)

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
        if isinstance(node, CartesianNode):
            return self._cartesian(node)
        if isinstance(node, PartitionsNode):
            return self._partitions(node)
        if isinstance(node, SortWithinNode):
            return self._sort_within(node)
        raise AssertionError(f"cannot compile {node}")

    def _finish_head(self, head: Head) -> Head:
        head.point.rdd_id = head.rdd.id()
        self.replay[head.point.capture_id] = (head.rdd, "pairs" if head.reader == "pairs" else "offset")
        return head

    def _stage_capture(self, node: Node) -> Head:
        pipe = self._union_pipeline(node) if node.kind == "union" else self._narrow_pipeline(node)
        point = self._new_point("stage", node, "one_local", [pipe.point], pipe.num_partitions,
                                {"reason": "cache"})
        rdd = self.sink(pipe, Tail("pairs")).mapPartitionsWithIndex(agents.stage_capture_agent(point.location))
        return self._finish_head(Head(rdd, "pairs", point, eager=False))

    def _narrow_pipeline(self, node: Node) -> Pipeline:
        parent = self.pipeline(node.parents[0])
        op = node.narrow  # type: ignore[attr-defined]
        return Pipeline(parent.point, [Branch(b.head, [*b.ops, op], b.offset) for b in parent.branches],
                        parent.num_partitions)

    def _combine(self, node: CombineNode) -> Head:
        pipe = self.pipeline(node.parents[0])
        combiner = self._new_point("combiner", node, "set_local", [pipe.point], pipe.num_partitions)
        tail = Tail("combine", location=combiner.location, create=node.create, merge=node.merge_value)
        map_side = self.sink(pipe, tail)
        combiner.rdd_id = map_side.id()
        self.replay[combiner.capture_id] = (map_side, "combined")
        shuffled = map_side.partitionBy(node.num_partitions, node.partition_func)
        reducer = self._new_point("reducer", node, "list_global", [combiner], node.num_partitions)
        rdd = shuffled.mapPartitionsWithIndex(agents.combine_reducer(reducer.location, node.merge_combiners))
        return self._finish_head(Head(rdd, "pairs", reducer))

    _GROUP_LAYOUT = {"group": ("reducer", "set_global"), "cogroup": ("reducer", "sets"),
                     "intersection": ("reducer", "sets"), "join": ("join", "pair"), "left": ("join", "pair"),
                     "right": ("join", "pair"), "full": ("join", "pair"),
                     "subtract_by_key": ("reducer", "one_global"), "subtract": ("reducer", "one_global")}

    def _group(self, node: GroupNode) -> Head:
        pipes = [self.pipeline(p) for p in node.parents]
        map_sides = [self.sink(pipe, Tail("group", side=i)) for i, pipe in enumerate(pipes)]
        combined = map_sides[0] if len(map_sides) == 1 else self.sc.union(map_sides)
        shuffled = combined.partitionBy(node.num_partitions, node.partition_func)
        kind, layout = self._GROUP_LAYOUT[node.mode]
        point = self._new_point(kind, node, layout, [p.point for p in pipes], node.num_partitions,
                                {"mode": node.mode})
        rdd = shuffled.mapPartitionsWithIndex(agents.group_reducer(point.location, node.mode, len(pipes)))
        return self._finish_head(Head(rdd, "pairs", point))

    def _shuffle(self, node: ShuffleNode) -> Head:
        pipe = self.pipeline(node.parents[0])
        map_side = self.sink(pipe, Tail("keyed_gid"))
        shuffled = map_side.partitionBy(node.num_partitions, node.partition_func)
        point = self._new_point(node.capture_kind, node, "one_global", [pipe.point], node.num_partitions)
        agent = agents.keyed_renumber_agent(point.location, node.sort_key, node.ascending)
        return self._finish_head(Head(shuffled.mapPartitionsWithIndex(agent), "pairs", point))

    def _regroup(self, node: Node) -> Head:
        pipe = self.pipeline(node.parents[0])
        map_side = self.sink(pipe, Tail("gid"))
        if isinstance(node, RepartitionNode):
            moved = map_side.repartition(node.num_partitions)
        else:
            moved = map_side.coalesce(node.num_partitions)
        point = self._new_point("stage", node, "one_global", [pipe.point], moved.getNumPartitions())
        rdd = moved.mapPartitionsWithIndex(agents.values_renumber_agent(point.location))
        return self._finish_head(Head(rdd, "pairs", point))

    def _cartesian(self, node: CartesianNode) -> Head:
        left, right = (self.pipeline(p) for p in node.parents)
        pairs = self.sink(left, Tail("gid")).cartesian(self.sink(right, Tail("gid")))
        point = self._new_point("join", node, "pair", [left.point, right.point], node.num_partitions)
        rdd = pairs.mapPartitionsWithIndex(agents.cartesian_agent(point.location))
        return self._finish_head(Head(rdd, "pairs", point))

    def _partitions(self, node: PartitionsNode) -> Head:
        pipe = self.pipeline(node.parents[0])
        layout = "set_partition" if node.whole_partition else "set_local"
        point = self._new_point("stage", node, layout, [pipe.point], pipe.num_partitions)
        agent = agents.partitions_agent(point.location, node.func, node.with_index, node.whole_partition)
        rdd = self.sink(pipe, Tail("pairs")).mapPartitionsWithIndex(agent)
        return self._finish_head(Head(rdd, "pairs", point, eager=False))

    def _sort_within(self, node: SortWithinNode) -> Head:
        pipe = self.pipeline(node.parents[0])
        point = self._new_point("stage", node, "one_local", [pipe.point], pipe.num_partitions)
        agent = agents.sort_within_agent(point.location, node.sort_key, node.ascending)
        rdd = self.sink(pipe, Tail("pairs")).mapPartitionsWithIndex(agent)
        return self._finish_head(Head(rdd, "pairs", point))

    # ------------------------------------------------------------------ outputs
    def output(self, node: Node, op: str, tail_kind: str, layout: str, limit: int = -1,
               extra: dict[str, Any] | None = None) -> tuple[CapturePoint, RDD, Pipeline]:
        """The sink RDD of an action and its (new) output capture point."""
        pipe = self.pipeline(node)
        point = self.lc.store.new_point("output", op, layout, [pipe.point], pipe.num_partitions, extra)
        rdd = self.sink(pipe, Tail(tail_kind, location=point.location, limit=limit, drain=not pipe.eager))
        point.rdd_id = rdd.id()
        return point, rdd, pipe
