"""LineageRDD: a set of records at one or more capture points, and Titian's trace operations.

Traces are lazy: ``goBack``/``goNext``/``goBackAll``/``goNextAll``/``filter`` return new
LineageRDDs and nothing runs until an action (``collect``, ``count``, ``ids``...). Other RDD
methods (``map``, ``reduceByKey``...) run on the traced records' values: selective replay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyroaring import BitMap64
from pyspark.core.rdd import RDD

from capture_agent.record.errors import ValuesNotAvailable
from capture_agent.record.query.engine import Frontier
from capture_agent.record.query.session import TraceSession
from capture_agent.record.query.whatif import Impact, what_if_deleted
from capture_agent.record.storage.layouts import Position
from capture_agent.record.worker.functions import unit_values


class LineageRDD:
    """Records (ids, with values on demand) at capture points of one run."""

    def __init__(self, lc: TraceSession, compute: Callable[[], Frontier], scope: set[str] | None = None,
                 description: str = "") -> None:
        self._lc = lc
        self._compute = compute
        self._frontier: Frontier | None = None
        self._scope = scope
        self.description = description

    # ------------------------------------------------------------------ construction
    @classmethod
    def at_output(cls, lc: TraceSession, capture_id: str, ids: list[int] | None = None) -> LineageRDD:
        """The records of an action's output (its kept result ids, or every record of its table);
        forward traces from them stay within what that action computed."""
        point = lc.store.point(capture_id)
        scope = lc.store.ancestors(capture_id)

        def compute() -> Frontier:
            return {capture_id: lc.engine.all_ids(point) if ids is None else BitMap64(ids)}

        return cls(lc, compute, scope, capture_id)

    @classmethod
    def at_point(cls, lc: TraceSession, capture_id: str, ids: Any = None) -> LineageRDD:
        point = lc.store.point(capture_id)

        def compute() -> Frontier:
            chosen = lc.engine.all_ids(point) if ids is None else BitMap64(list(ids))
            return {capture_id: chosen}

        return cls(lc, compute, None, capture_id)

    def _derive(self, compute: Callable[[], Frontier], what: str) -> LineageRDD:
        return LineageRDD(self._lc, compute, self._scope, f"{self.description}.{what}")

    # ------------------------------------------------------------------ evaluation
    def frontier(self) -> Frontier:
        """{capture_id: ids} of the records this LineageRDD holds (computed once)."""
        if self._frontier is None:
            self._frontier = {k: v for k, v in self._compute().items() if v}
        return self._frontier

    def points(self) -> list[str]:
        return sorted(self.frontier(), key=lambda c: self._lc.store.point(c).seq)

    # ------------------------------------------------------------------ tracing
    def goBack(self) -> LineageRDD:
        """One capture point back (records at inputs stay where they are)."""

        def compute() -> Frontier:
            out: Frontier = {}
            for cid, ids in self.frontier().items():
                point = self._lc.store.point(cid)
                steps = self._lc.engine.backward(point, ids) if point.parents else {cid: ids}
                for parent, pids in steps.items():
                    out.setdefault(parent, BitMap64()).__ior__(pids)
            return out

        return self._derive(compute, "goBack()")

    def goBackAll(self) -> LineageRDD:
        """All the way back to the job's inputs."""
        return self._derive(lambda: self._lc.engine.back_all(self.frontier()), "goBackAll()")

    def goNext(self) -> LineageRDD:
        """One capture point forward (records at outputs stay where they are)."""

        def compute() -> Frontier:
            out: Frontier = {}
            for cid, ids in self.frontier().items():
                children = self._lc.engine.children(cid, self._scope)
                if not children:
                    out.setdefault(cid, BitMap64()).__ior__(ids)
                for child in children:
                    nxt = self._lc.engine.forward(child, cid, ids)
                    if nxt:
                        out.setdefault(child.capture_id, BitMap64()).__ior__(nxt)
            return out

        return self._derive(compute, "goNext()")

    def goNextAll(self) -> LineageRDD:
        """All the way forward to the outputs (of the traced action, when it started from one)."""
        return self._derive(lambda: self._lc.engine.next_all(self.frontier(), self._scope), "goNextAll()")

    def filter(self, f: Callable[[Any], bool]) -> LineageRDD:
        """Keeps the records whose value satisfies ``f``; their ids ride along."""

        def compute() -> Frontier:
            out: Frontier = {}
            for cid, ids in self.frontier().items():
                kept = [i for i, _ in self._lc.values.values(self._lc.store.point(cid), ids, f)]
                if kept:
                    out[cid] = BitMap64(kept)
            return out

        return self._derive(compute, "filter()")

    def at(self, target: Any) -> LineageRDD:
        """Only the records at one capture point (a capture id, or a captured RDD's point)."""
        cid = self._lc.capture_id_of(target)
        return self._derive(lambda: {k: v for k, v in self.frontier().items() if k == cid}, f"at({cid})")

    def split(self) -> dict[str, LineageRDD]:
        """One LineageRDD per capture point of the frontier (e.g. the two inputs of a join)."""
        return {cid: self.at(cid) for cid in self.points()}

    # ------------------------------------------------------------------ what-if
    def whatIfDeleted(self, target: Any = None) -> Impact:
        """What deleting these records would do to ``target`` (a captured RDD or capture id;
        default: the output of the last action computed from them), as ``query.whatif`` says."""
        cid = None if target is None else self._lc.capture_id_of(target)
        return what_if_deleted(self._lc, self.frontier(), cid)

    # ------------------------------------------------------------------ actions
    def ids(self) -> list[int]:
        """The record ids, by capture point then id."""
        return [i for cid in self.points() for i in self.frontier()[cid]]

    def count(self) -> int:
        return sum(len(ids) for ids in self.frontier().values())

    def items(self) -> list[tuple[int, Any]]:
        """(id, value) of every record, by capture point then id."""
        out: list[tuple[int, Any]] = []
        for cid in self.points():
            out.extend(self._lc.values.values(self._lc.store.point(cid), self.frontier()[cid]))
        return out

    def collect(self) -> list[Any]:
        """The records' values: raw input records at inputs, results at outputs."""
        return [v for _, v in self.items()]

    def take(self, num: int) -> list[Any]:
        """The values of the first ``num`` records (by capture point, then id): only those are read."""
        out: list[Any] = []
        frontier = self.frontier()
        for cid in self.points():
            need = num - len(out)
            if need <= 0:
                break
            ids = frontier[cid]
            if len(ids) > need:
                ids = BitMap64([ids[i] for i in range(need)])
            out.extend(v for _, v in self._lc.values.values(self._lc.store.point(cid), ids))
        return out[:num]

    def first(self) -> Any:
        values = self.take(1)
        if not values:
            raise ValueError("LineageRDD is empty")
        return values[0]

    def isEmpty(self) -> bool:
        return self.count() == 0

    def positions(self) -> list[Position]:
        """Where each record lives (file and byte offset for text inputs), in ``ids()`` order."""
        out: list[Position] = []
        for cid in self.points():
            out.extend(self._lc.values.positions(self._lc.store.point(cid), self.frontier()[cid]))
        return out

    def rdd(self) -> RDD:
        """The traced records' values as a plain PySpark RDD (for selective replay): input lines
        are read by the tasks, one per split holding traced lines; other values via the driver."""
        sc = self._lc.sc
        if sc is None:
            raise ValuesNotAvailable("replay needs a SparkContext: open the run with LineageRun(run_dir, sc)")
        parts: list[RDD] = []
        others: list[Any] = []
        for cid in self.points():
            point = self._lc.store.point(cid)
            ids = self.frontier()[cid]
            units = self._lc.values.text_units(point, ids)
            if units is None:
                others.extend(v for _, v in self._lc.values.values(point, ids))
            elif units:
                parts.append(sc.parallelize(units, len(units)).flatMap(unit_values))
        if others or not parts:
            parts.append(sc.parallelize(others, max(1, min(len(others) // 10000 + 1, sc.defaultParallelism))))
        return parts[0] if len(parts) == 1 else sc.union(parts)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if hasattr(RDD, name):
            return getattr(self.rdd(), name)
        raise AttributeError(f"LineageRDD has no attribute {name!r}")

    def __repr__(self) -> str:
        return f"LineageRDD({self.description})"
