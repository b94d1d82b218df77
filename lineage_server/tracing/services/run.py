"""Running a trace in the worker: claim it, walk the lineage with the capture agent's engine, store
the answer in the lineage store, and close the books.

``run_trace`` is what the Celery task calls, and is tested directly. The claim is a conditional
update (queued -> running), so a message delivered twice runs the trace once. While it runs, a
watcher thread beats the trace's heartbeat (a worker killed mid-trace is found by it going stale,
``services.recovery``) and cancels the trace's Spark jobs as soon as a user cancels it; the walk
itself stops at the next capture point.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from capture_agent.record import LineageRun
from capture_agent.record.errors import LineageError
from capture_agent.record.query.questions import TraceAnswer, TraceCancelled, select, walk
from capture_agent.record.query.results import ResultSummary, iter_records, read_frontier, write_result
from capture_agent.record.storage.layouts.base import MissingTable
from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.models import Trace, TraceStatus

log = logging.getLogger("lineage_server.tracing")

MAX_ATTEMPTS = 3
STOPPED_TOO_OFTEN = ("the worker running this trace stopped {attempts} times (killed, or out of memory?); see the "
                     "workers' logs, then re-run it")
FIRST_PAGE = 50
GRAPH_RECORDS = 300  # record-level nodes and edges are kept for traces crossing at most this many


class TraceFailure(Exception):
    """A trace that cannot be answered; the message tells the user what to do."""


def run_trace(trace_pk: int, *, worker: str = "", spark: Callable[[], Any] | None = None) -> Trace | None:
    """Runs a queued trace to its end (succeeded, failed or cancelled); None if it was not queued.

    Args:
        trace_pk: the trace.
        worker: the Celery worker's name, kept on the trace (a restarted worker recovers its own).
        spark: gives the warm SparkContext (called only when a step may run on Spark).
    """
    trace = _claim(trace_pk, worker)
    if trace is None:
        return None
    watch = _Watch(trace.pk)
    try:
        with watch:
            _answer(trace, watch, spark)
    except TraceCancelled:
        log.info("trace %s: cancelled while running", trace.pk)
    except TraceFailure as exc:
        _fail(trace.pk, str(exc))
    except Exception as exc:
        log.exception("trace %s failed", trace.pk)
        _fail(trace.pk, f"internal error ({type(exc).__name__}: {exc}); the worker's log has the details")
    return Trace.objects.get(pk=trace.pk)


def _claim(pk: int, worker: str) -> Trace | None:
    with transaction.atomic():
        trace = Trace.objects.select_for_update().filter(pk=pk).first()
        if trace is None or trace.status != TraceStatus.QUEUED:
            return None
        now = timezone.now()
        if trace.attempts >= MAX_ATTEMPTS:
            trace.status = TraceStatus.FAILED
            trace.finished_at = now
            trace.error = STOPPED_TOO_OFTEN.format(attempts=trace.attempts)
            trace.save(update_fields=["status", "finished_at", "error"])
            return None
        trace.status = TraceStatus.RUNNING
        trace.attempts += 1
        trace.started_at = trace.started_at or now
        trace.heartbeat_at = now
        trace.worker = worker[:200]
        trace.error = ""
        trace.save(update_fields=["status", "attempts", "started_at", "heartbeat_at", "worker", "error"])
        return trace


def _fail(pk: int, message: str) -> None:
    Trace.objects.filter(pk=pk, status=TraceStatus.RUNNING).update(
        status=TraceStatus.FAILED, error=message, finished_at=timezone.now()
    )


class _Watch:
    """Beats the heartbeat and watches for a cancellation, in a thread beside the trace."""

    def __init__(self, pk: int) -> None:
        self.pk = pk
        self.group = f"lineage-trace-{pk}-{uuid.uuid4().hex[:8]}"
        self.sc: Any = None
        self.cancelled = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"trace-{pk}-heartbeat", daemon=True)
        self.interval = max(1.0, min(5.0, settings.LINEAGE["TRACE_STALE_SECONDS"] / 6))

    def __enter__(self) -> _Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                Trace.objects.filter(pk=self.pk, status=TraceStatus.RUNNING).update(heartbeat_at=timezone.now())
                if self._is_cancelled() and not self.cancelled.is_set():
                    self.cancelled.set()
                    if self.sc is not None:
                        self.sc.cancelJobGroup(self.group)
        except Exception:
            log.exception("trace %s: heartbeat failed", self.pk)
        finally:
            connection.close()

    def _is_cancelled(self) -> bool:
        status = Trace.objects.filter(pk=self.pk).values_list("status", flat=True).first()
        return status != TraceStatus.RUNNING

    def check(self) -> None:
        """Raises TraceCancelled once the trace is no longer running (cancelled, or taken back)."""
        if self.cancelled.is_set() or self._is_cancelled():
            self.cancelled.set()
            raise TraceCancelled(f"trace {self.pk} was cancelled")

    def progress(self, done: int, total: int, records: int) -> None:
        Trace.objects.filter(pk=self.pk, status=TraceStatus.RUNNING).update(
            points_done=done, points_total=total, records_so_far=records, heartbeat_at=timezone.now()
        )
        self.check()


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


def _answer(trace: Trace, watch: _Watch, spark: Callable[[], Any] | None) -> None:
    clock = _Clock()
    run_dir, run_id = _run_folder(trace)
    mode = settings.LINEAGE["TRACE_MODE"]
    sc = spark() if spark is not None and mode != "local" else None
    watch.sc = sc
    if sc is not None:
        sc.setJobGroup(watch.group, f"lineage trace {trace.pk}", interruptOnCancel=True)
    try:
        run = LineageRun(run_dir, sc=sc, trace_mode=mode)
    except (OSError, ValueError) as exc:
        raise TraceFailure(f"the lineage store folder {run_dir} is missing or unreadable ({type(exc).__name__}: "
                           f"{exc}); it was deleted or moved since capture, or this worker cannot reach it") from None
    clock.lap("open_ms")

    def local(server_id: str) -> str:
        return server_id.split("/", 1)[1] if server_id.startswith(f"{run_id}/") else server_id

    def server(local_id: str) -> str:
        return f"{run_id}/{local_id}"

    try:
        frontier = _selection(trace, run, local, watch)
        clock.lap("select_ms")
        target = trace.target if trace.target in ("end", "step") else local(trace.target)
        answer = walk(run.session, frontier, trace.direction, target, progress=watch.progress)
        clock.lap("walk_ms")
        location = run.store.fs.join(run.store.run_dir, "traces", f"trace-{trace.pk}-{uuid.uuid4().hex[:8]}.parquet")
        summary = write_result(run.session, answer.result, location, FIRST_PAGE,
                               on_chunk=lambda _: watch.check())
        clock.lap("store_ms")
    except (TraceCancelled, TraceFailure):
        raise
    except KeyError as exc:
        what = exc.args[0] if exc.args else exc
        raise TraceFailure(f"{what} (the run folder {run_dir} holds another run?)") from None
    except MissingTable as exc:
        raise TraceFailure(f"a lineage table is missing: {exc}; it was deleted since capture") from None
    except (LineageError, ValueError) as exc:
        raise TraceFailure(str(exc)) from None
    uri = run.store.fs.uri(location)
    finished = _finish(trace, watch, answer, summary, uri, server, clock, run)
    if not finished:
        from lineage_server.tracing.services.history import remove_result

        remove_result(uri)  # cancelled at the last moment: the answer is not kept
        raise TraceCancelled(f"trace {trace.pk} was cancelled")


def _selection(trace: Trace, run: LineageRun, local: Callable[[str], str], watch: _Watch) -> dict[str, Any]:
    selection = trace.selection
    if "trace" in selection:
        assert trace.seed is not None
        store = run.store.fs
        path = store.path_of(trace.seed.result_location)
        wanted = selection.get("capture_point")
        return read_frontier(store, path, local(wanted) if wanted else None)
    start = local(trace.start_capture_id)
    if "predicate" in selection:
        return select(run.session, start, predicate=selection["predicate"])
    return select(run.session, start, ids=selection.get("ids"))


class _Clock:
    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.laps: dict[str, int] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = int((now - self.last) * 1000)
        self.last = now


def _finish(trace: Trace, watch: _Watch, answer: TraceAnswer, summary: ResultSummary, location: str,
            server: Callable[[str], str], clock: _Clock, run: LineageRun) -> bool:
    now = timezone.now()
    timings = {"queued_ms": int((trace.started_at - trace.created_at).total_seconds() * 1000) if trace.started_at
               else None, **clock.laps, "spark_ms": int(answer.spark_seconds * 1000), "spark_jobs": answer.spark_jobs}
    points = []
    for cid in answer.visited:
        point = run.store.point(cid)
        points.append({"capture_id": server(cid), "kind": point.kind, "op": point.op, "stage_id": point.stage_id,
                       "rdd_id": point.rdd_id, "records": len(answer.crossed[cid]), "in_result": cid in answer.result})
    first_page = [{**r, "capture_id": server(r["capture_id"])} for r in summary.first_page]
    summary_json = {
        "run_id": server("").rstrip("/"),
        "points": points,
        "result_points": {server(cid): n for cid, n in summary.by_point.items()},
        "first_page": first_page,
        "values_missing": [server(cid) for cid in summary.values_missing],
        "timings": timings,
    }
    graph = _graph(answer, points, server, run, location, summary.count)
    updated = Trace.objects.filter(pk=trace.pk, status=TraceStatus.RUNNING).update(
        status=TraceStatus.SUCCEEDED, finished_at=now, result_location=location, result_count=summary.count,
        summary=summary_json, graph=graph, points_done=len(answer.visited), points_total=len(answer.visited),
        records_so_far=summary.count, heartbeat_at=now,
    )
    return updated == 1


def _graph(answer: TraceAnswer, points: list[dict[str, Any]], server: Callable[[str], str], run: LineageRun,
           location: str, count: int) -> dict[str, Any]:
    """The capture points the trace crossed (with records at each) and, for small traces, its records
    and the edges between them."""
    crossed = set(answer.crossed)
    edges = [{"source": server(parent), "target": server(cid)}
             for cid in answer.visited for parent in run.store.point(cid).parents if parent in crossed]
    graph: dict[str, Any] = {"points": points, "edges": edges, "records": None}
    if answer.edges is None or sum(len(v) for v in answer.crossed.values()) > GRAPH_RECORDS:
        return graph
    values: dict[tuple[str, int], Any] = {}
    if count <= GRAPH_RECORDS:
        path = run.store.fs.path_of(location)
        values = {(r["capture_id"], r["record_id"]): r["value"] for r in iter_records(run.store.fs, path)}
    nodes = [{"capture_id": server(cid), "record_id": rid, "value": values.get((cid, rid))}
             for cid in answer.visited for rid in answer.crossed[cid]]
    links = [{"source": [server(p), pid], "target": [server(c), cid]} for p, pid, c, cid in answer.edges]
    graph["records"] = {"nodes": nodes, "edges": links}
    return graph
