"""The trace engine: walks capture points one step at a time, the frontier a Roaring bitmap.

A frontier is a set of 64-bit ids at one capture point. Each step is the point's layout's
(``storage.layouts``): a backward step reads only the partition tables whose partitions hold ids
of the frontier (the id's high bits name them: Titian's partition-aware join) and only the row
groups holding those rows; a forward step reads the child's tables. A step is a list of
independent units (one partition table each): small steps run in this process, large ones as a
Spark job over the units when a SparkContext is at hand. A walk that would cross a table its task
could not write stops before it starts, naming the table and why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.errors import IncompleteLineage
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.manifest import CapturePoint, LineageStore

SPARK_MIN_BYTES = 256 * 1024 * 1024  # a step reading less than this runs in this process
TRACE_MODES = ("auto", "local", "spark")

Unit = tuple[Any, ...]
Frontier = dict[str, BitMap64]


def _run_unit(fn: Callable[..., Any]) -> Callable[[Unit], Any]:
    def run(unit: Unit) -> Any:
        return fn(*unit)

    return run


class TraceEngine:
    """Steps through one run's capture points; runs big steps as Spark jobs when it can."""

    def __init__(self, store: LineageStore, sc: Any = None, mode: str = "auto") -> None:
        if mode not in TRACE_MODES:
            raise ValueError(f"trace mode must be auto, local or spark, not {mode!r}")
        self.store = store
        self.sc = sc
        self.mode = mode
        self.spark_jobs = 0
        self.spark_seconds = 0.0  # wall time of the steps run as Spark jobs

    @property
    def fs(self) -> StoreFS:
        return self.store.fs

    def point(self, capture_id: str) -> CapturePoint:
        return self.store.point(capture_id)

    # ------------------------------------------------------------------ execution
    def run_units(self, fn: Callable[..., Any], units: list[Unit], cost: int) -> list[Any]:
        """Runs independent units here, or as one Spark job when they would read ``cost`` bytes
        or more (auto mode)."""
        if self._use_spark(cost, len(units)):
            self.spark_jobs += 1
            started = time.perf_counter()
            try:
                return list(self.sc.parallelize(units, len(units)).map(_run_unit(fn)).collect())
            finally:
                self.spark_seconds += time.perf_counter() - started
        return [fn(*u) for u in units]

    def _use_spark(self, cost: int, nunits: int) -> bool:
        if self.sc is None or self.mode == "local" or nunits == 0:
            return False
        return self.mode == "spark" or (nunits > 1 and cost >= SPARK_MIN_BYTES)

    # ------------------------------------------------------------------ completeness
    def check_complete(self, capture_ids: Iterable[str]) -> None:
        """Raises IncompleteLineage when any of these points has tables its tasks did not write."""
        missing = self.store.missing_tables(set(capture_ids))
        if missing:
            raise IncompleteLineage(missing)

    # ------------------------------------------------------------------ steps
    def backward(self, point: CapturePoint, ids: BitMap64) -> Frontier:
        """Ids at each parent of ``point`` that the records ``ids`` at ``point`` came from; an input
        that reads files its parents wrote and others keeps the others' records under its own id
        (they start there)."""
        if not ids or not point.parents:
            return {}
        self.check_complete([point.capture_id])
        return point.layout.backward(self, point, ids)

    def forward(self, child: CapturePoint, parent_id: str, ids: BitMap64) -> BitMap64:
        """Ids at ``child`` of the records that used any of ``ids`` (ids at ``parent_id``)."""
        if not ids:
            return BitMap64()
        self.check_complete([child.capture_id])
        return child.layout.forward(self, child, parent_id, ids)

    # ------------------------------------------------------------------ walks
    def back_all(self, frontier: Frontier) -> Frontier:
        """Walks back until only input points (points without parents) hold ids."""
        pending = {k: v.copy() for k, v in frontier.items() if v}
        self.check_complete(c for cid in pending for c in self.store.ancestors(cid))
        done: Frontier = {}
        while pending:
            cid = max(pending, key=lambda c: self.point(c).seq)
            ids = pending.pop(cid)
            point = self.point(cid)
            if not point.parents:
                done.setdefault(cid, BitMap64()).__ior__(ids)
                continue
            for parent, pids in self.backward(point, ids).items():
                (done if parent == cid else pending).setdefault(parent, BitMap64()).__ior__(pids)
        return done

    def next_all(self, frontier: Frontier, scope: set[str] | None) -> Frontier:
        """Walks forward until the ids reach points without children (in ``scope``)."""
        pending = {k: v.copy() for k, v in frontier.items() if v}
        reachable = {c for cid in pending for c in self.store.descendants(cid)}
        self.check_complete(reachable if scope is None else reachable & scope)
        done: Frontier = {}
        while pending:
            cid = min(pending, key=lambda c: self.point(c).seq)
            ids = pending.pop(cid)
            children = self.children(cid, scope)
            if not children:
                done.setdefault(cid, BitMap64()).__ior__(ids)
                continue
            for child in children:
                out = self.forward(child, cid, ids)
                if out:
                    pending.setdefault(child.capture_id, BitMap64()).__ior__(out)
        return done

    def children(self, cid: str, scope: set[str] | None) -> list[CapturePoint]:
        return [c for c in self.store.children(cid) if scope is None or c.capture_id in scope]

    # ------------------------------------------------------------------ all ids of a point
    def all_ids(self, point: CapturePoint) -> BitMap64:
        """Every record id at a point."""
        return point.layout.all_ids(self.fs, point)
