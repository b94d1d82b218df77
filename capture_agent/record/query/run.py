"""Opening a finished run's lineage from its folder: traces without the job that captured it.

    run = LineageRun("var/lineage/local-1763731200000")     # a path or URL; optionally a SparkContext
    out = run.outputs()[-1]
    run.lineage(out, [0]).goBackAll().collect()             # input lines, read by seeking
    LineageRun(path, chain=True)                            # and the runs chained to it by saved text

With ``chain``, the other runs of the store root that this run's text inputs read (their
``saveAsTextFile`` outputs), or that read this run's, are linked (``storage.chains``): traces go
on into them, their points named ``<run id>/<capture id>``; ``chained_apps`` names them.

Input records and action results (kept in ``values.parquet``) are readable; records at
intermediate capture points are not (they exist only while their job's RDDs do). Given a
SparkContext, what-ifs replay the job kept in the folder (``stored_job``) for exact new values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from capture_agent.record.query.executors import ship_task_code
from capture_agent.record.query.lineage_rdd import LineageRDD
from capture_agent.record.query.session import TraceSession
from capture_agent.record.query.stored_job import StoredJob
from capture_agent.record.storage.chains import link_runs
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.manifest import CapturePoint, LineageStore


class LineageRun:
    """The capture points of one run folder, ready for LineageRDD traces."""

    def __init__(self, run_dir: str, sc: Any = None, trace_mode: str = "auto", store: StoreFS | None = None,
                 chain: bool = False, allow: Callable[[str], bool] | None = None) -> None:
        lineage = LineageStore.open(run_dir, store)
        # the runs chained to this one by text one saved and another read (``allow``: which run ids)
        self.chained_apps = link_runs(lineage, allow).apps if chain else {lineage.run_id: lineage.app_id}
        # with a SparkContext, what-ifs replay the job kept in the folder (when it was kept)
        self.job = StoredJob.open(lineage, sc) if sc is not None else None
        self.session = TraceSession(lineage, sc, trace_mode, rerun=self.job.rerun if self.job else None,
                                    report=self.job.report if self.job else None)
        if self.job is not None:
            self.job.values = self.session.values
        if sc is not None and (trace_mode != "local" or self.job is not None):
            ship_task_code()  # trace steps run as Spark jobs, and replays, need our task code on the executors

    @property
    def store(self) -> LineageStore:
        return self.session.store

    @property
    def run_dir(self) -> str:
        return self.store.fs.uri(self.store.run_dir)

    @property
    def engine(self) -> Any:
        return self.session.engine

    def capture_points(self) -> list[CapturePoint]:
        return self.store.by_seq()

    def outputs(self) -> list[CapturePoint]:
        return [p for p in self.capture_points() if p.kind == "output"]

    def lineage(self, target: Any, ids: Iterable[int] | None = None) -> LineageRDD:
        """A LineageRDD at a capture point: all its records, or the given ids."""
        capture_id = self.session.capture_id_of(target)
        if self.store.point(capture_id).kind == "output":
            return LineageRDD.at_output(self.session, capture_id, None if ids is None else list(ids))
        return LineageRDD.at_point(self.session, capture_id, ids)
