"""What answering a trace, a what-if and a diff share in the worker: the run folder opened (with
the maps between server and run capture ids, and the clock of its laps), the selection read,
where answers go and what happens when a cancellation beats the answer (the failures users read
are ``failures``; the watcher beside them is ``watch.Watch``).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from capture_agent.record import LineageRun
from capture_agent.record.query.questions import TraceCancelled, select
from capture_agent.record.query.results import read_frontier
from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.models import Trace
from lineage_server.tracing.selectors.trace_values import team_runs
from lineage_server.tracing.services.failures import TraceFailure
from lineage_server.tracing.services.watch import Watch
from lineage_server.tracing.spark import SparkOnDemand, pool_of

FIRST_PAGE = 50


def _run_folder(trace: Trace) -> tuple[str, str]:
    """(run folder, run id) of the trace's start (or of its seed's result)."""
    if trace.start_capture_id:
        server_id = trace.start_capture_id
    elif trace.seed is not None and trace.seed.summary.get("result_points"):
        server_id = next(iter(trace.seed.summary["result_points"]))
    else:
        raise TraceFailure("the trace whose result this one starts from was deleted; ask the question afresh")
    point = CapturePoint.objects.filter(application=trace.application_id, capture_id=server_id).first()
    if point is None:
        raise TraceFailure(f"capture point {server_id} is no longer registered (was its application re-ingested?)")
    return point.location.rstrip("/").rsplit("/", 1)[0], server_id.split("/", 1)[0]


@dataclass
class Opened:
    """A trace's run opened in the worker, with the maps between server and run capture ids."""

    run: LineageRun
    run_dir: str
    run_id: str
    clock: Clock
    sc: SparkOnDemand | None  # the worker's SparkContext, started at the trace's first Spark step

    def local(self, server_id: str) -> str:
        return server_id.split("/", 1)[1] if server_id.startswith(f"{self.run_id}/") else server_id

    def server(self, local_id: str) -> str:
        """A run capture id as the server names it (a chained run's point is named so already)."""
        return local_id if "/" in local_id else f"{self.run_id}/{local_id}"

    def timings(self, trace: Trace) -> dict[str, Any]:
        """How long the trace waited in the queue, then each lap of its run (milliseconds)."""
        queued = int((trace.started_at - trace.created_at).total_seconds() * 1000) if trace.started_at else None
        return {"queued_ms": queued, **self.clock.laps}

    def result_path(self, trace: Trace) -> str:
        """Where a new answer of ``trace`` is written (under the run's ``traces`` folder)."""
        store = self.run.store
        return store.fs.join(store.run_dir, "traces", f"{trace.kind}-{trace.pk}-{uuid.uuid4().hex[:8]}.parquet")

    def selection(self, trace: Trace) -> dict[str, Any]:
        """The records ``trace`` starts from, per capture point: its seed's result, or its selection."""
        selection = trace.selection
        if "trace" in selection:
            assert trace.seed is not None
            store = self.run.store.fs
            path = store.path_of(trace.seed.result_location)
            wanted = selection.get("capture_point")
            return read_frontier(store, path, self.local(wanted) if wanted else None)
        start = self.local(trace.start_capture_id)
        if "predicate" in selection:
            return select(self.run.session, start, predicate=selection["predicate"])
        return select(self.run.session, start, ids=selection.get("ids"))


def open_run(trace: Trace, watch: Watch, spark: Callable[[], Any] | None, chain: bool = False) -> Opened:
    """Opens the trace's run folder (with ``spark`` giving the SparkContext of Spark steps and replays,
    called at the first of them, or None); with ``chain``, linked to the runs of the team's other
    applications that its text inputs read or that read its saved text
    (``capture_agent.record.storage.chains``): a trace goes on into them."""
    clock = Clock()
    run_dir, run_id = _run_folder(trace)
    sc = None if spark is None else _on_demand(trace, watch, spark)
    try:
        allow = team_runs(trace.application.team_id).__contains__ if chain else None
        run = LineageRun(run_dir, sc=sc, trace_mode=settings.LINEAGE["TRACE_MODE"], chain=chain, allow=allow)
    except (OSError, ValueError) as exc:
        raise TraceFailure(f"the lineage store folder {run_dir} is missing or unreadable ({type(exc).__name__}: "
                           f"{exc}); it was deleted or moved since capture, or this worker cannot reach it") from None
    clock.lap("open_ms")
    return Opened(run, run_dir, run_id, clock, sc)


def _on_demand(trace: Trace, watch: Watch, spark: Callable[[], Any]) -> SparkOnDemand:
    """The worker's SparkContext for ``trace``, started (or joined) at its first Spark step."""
    pool = pool_of(trace.application.team_id)

    def start() -> Any:
        with watch.uninterruptible():  # not in the middle of starting the worker's Spark
            return spark()

    def join(sc: Any) -> None:  # the trace's Spark jobs: in its group (which the watcher cancels) and pool
        sc.setJobGroup(watch.group, f"lineage {trace.kind} {trace.pk}", interruptOnCancel=True)
        sc.setLocalProperty("spark.scheduler.pool", pool)
        watch.sc = sc

    return SparkOnDemand(start, join)


def close_books(trace: Trace, updated: bool, uri: str) -> None:
    """After the final update: an answer a cancellation beat at the last moment is not kept."""
    if not updated:
        from lineage_server.tracing.services.history import remove_result

        remove_result(uri)
        raise TraceCancelled(f"{trace.kind} {trace.pk} was cancelled")


class Clock:
    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.laps: dict[str, int] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = int((now - self.last) * 1000)
        self.last = now


