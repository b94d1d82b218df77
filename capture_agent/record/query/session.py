"""The lineage of one run, ready to trace: its store, the trace engine and the value reader."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from capture_agent.record.query.engine import Frontier, TraceEngine
from capture_agent.record.query.values import KeptResult, Replay, ValueReader
from capture_agent.record.storage.manifest import CapturePoint, LineageStore

Rerun = Callable[[str, Frontier, Frontier], list[Any]]  # target, deleted, per point the ids lineage says die


def _capture_id(store: LineageStore, target: Any) -> str:
    capture_id = target.capture_id if isinstance(target, CapturePoint) else str(target)
    store.point(capture_id)
    return capture_id


class TraceSession:
    """What LineageRDDs trace against: a LineageContext's live run, or a run opened from its folder.

    Args:
        store: the run's capture points.
        sc: a SparkContext for big trace steps and replay, or None.
        trace_mode: ``auto`` (small steps here, big ones as Spark jobs), ``local`` or ``spark``.
        outputs: action results kept in memory, by capture id.
        replay: recomputes records of intermediate points (only where the job's RDDs exist).
        resolve: turns a target (capture id, CapturePoint, captured RDD...) into a capture id.
        rerun: an output computed again without some input records (what-if; only where the
            job's functions are).
        report: how the last rerun computed it (``stored_job.StoredJob.report``'s dict).
    """

    def __init__(self, store: LineageStore, sc: Any = None, trace_mode: str = "auto",
                 outputs: Mapping[str, KeptResult] | None = None, replay: Replay | None = None,
                 resolve: Callable[[Any], str] | None = None, rerun: Rerun | None = None,
                 report: Callable[[], dict[str, Any]] | None = None) -> None:
        self.store = store
        self.sc = sc
        self.engine = TraceEngine(store, sc, trace_mode)
        self.values = ValueReader(self.engine, outputs, replay)
        self._resolve = resolve
        self.rerun = rerun
        self.report = report

    def capture_id_of(self, target: Any) -> str:
        if self._resolve is not None:
            return self._resolve(target)
        return _capture_id(self.store, target)
