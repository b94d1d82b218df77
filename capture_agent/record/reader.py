"""Opening a finished run's lineage from its folder: traces without the job that captured it.

    run = LineageRun("var/lineage/local-1763731200000")     # optionally with a SparkContext
    out = run.outputs()[-1]
    run.lineage(out, [0]).goBackAll().collect()             # input lines, read by seeking

Input records and action results (kept in ``values.parquet``) are readable; records at
intermediate capture points are not (they exist only while their job's RDDs do).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from capture_agent.record.lineage_rdd import LineageRDD
from capture_agent.record.store import CapturePoint, LineageStore
from capture_agent.record.trace import TraceEngine
from capture_agent.record.values import ValueReader


class LineageRun:
    """The capture points of one run folder, ready for LineageRDD traces."""

    def __init__(self, run_dir: str, sc: Any = None, trace_mode: str = "auto") -> None:
        self.store = LineageStore.open(run_dir)
        self.sc = sc
        self.engine = TraceEngine(self.store, sc, trace_mode)
        self.values = ValueReader(self.store, self.engine.run_units)

    @property
    def run_dir(self) -> str:
        return self.store.run_dir

    def capture_points(self) -> list[CapturePoint]:
        return sorted(self.store.points.values(), key=lambda p: p.seq)

    def outputs(self) -> list[CapturePoint]:
        return [p for p in self.capture_points() if p.kind == "output"]

    def capture_id_of(self, target: Any) -> str:
        capture_id = target.capture_id if isinstance(target, CapturePoint) else str(target)
        self.store.point(capture_id)
        return capture_id

    def lineage(self, target: Any, ids: Iterable[int] | None = None) -> LineageRDD:
        """A LineageRDD at a capture point: all its records, or the given ids."""
        capture_id = self.capture_id_of(target)
        lin = LineageRDD.at_point(self, capture_id, ids)  # type: ignore[arg-type]
        if self.store.point(capture_id).kind == "output":
            lin._scope = self.store.ancestors(capture_id)
        return lin
