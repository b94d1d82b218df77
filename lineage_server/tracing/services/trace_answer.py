"""Answering a trace in the worker (``dispatch.run_trace`` hands traces here once claimed): walk
the lineage with the capture agent's engine, store the answer in the lineage store, keep its
summary and provenance subgraph on the row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.utils import timezone

from capture_agent.record import LineageRun
from capture_agent.record.query.questions import TraceAnswer, walk
from capture_agent.record.query.results import ResultSummary, iter_records, session_values, write_result
from lineage_server.tracing.models import Trace, TraceStatus
from lineage_server.tracing.selectors.trace_values import run_id_of
from lineage_server.tracing.services.failures import lineage_failures
from lineage_server.tracing.services.opened_run import FIRST_PAGE, Opened, close_books, open_run
from lineage_server.tracing.services.watch import Watch

GRAPH_RECORDS = 300  # record-level nodes and edges are kept for traces crossing at most this many


def answer_trace(trace: Trace, watch: Watch, spark: Callable[[], Any] | None) -> None:
    local = settings.LINEAGE["TRACE_MODE"] == "local"
    with watch.interruptible():
        # Spark starts (or is joined) at the first step that runs on it: none, when every step is small
        opened = open_run(trace, watch, None if local else spark, chain=True)
        run, clock = opened.run, opened.clock
        with lineage_failures(opened.run_dir):
            frontier = opened.selection(trace)
            clock.lap("select_ms")
            target = trace.target if trace.target in ("end", "step") else opened.local(trace.target)
            answer = walk(run.session, frontier, trace.direction, target, progress=watch.progress)
            clock.lap("walk_ms")
            location = opened.result_path(trace)
            summary = write_result(run.session, answer.result, location, FIRST_PAGE,
                                   on_chunk=lambda _: watch.check_flag(),
                                   keep_all=settings.LINEAGE["TRACE_KEEP_VALUES_UP_TO"])
            clock.lap("store_ms")
    uri = run.store.fs.uri(location)
    close_books(trace, _finish(trace, opened, answer, summary, uri), uri)


def _finish(trace: Trace, opened: Opened, answer: TraceAnswer, summary: ResultSummary, location: str) -> bool:
    now = timezone.now()
    run, server = opened.run, opened.server
    timings = {**opened.timings(trace), "spark_ms": int(answer.spark_seconds * 1000), "spark_jobs": answer.spark_jobs}
    points = []
    for cid in answer.visited:
        point = run.store.point(cid)
        points.append({"capture_id": server(cid), "kind": point.kind, "op": point.op, "stage_id": point.stage_id,
                       "rdd_id": point.rdd_id, "records": len(answer.crossed[cid]), "in_result": cid in answer.result})
    first_page = [{**r, "capture_id": server(r["capture_id"])} for r in summary.first_page]
    summary_json = {
        "run_id": server("").rstrip("/"),
        "applications": _applications(answer, opened),
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


def _applications(answer: TraceAnswer, opened: Opened) -> list[str]:
    """The applications whose capture points the trace crossed, its own first (a trace goes on into
    the runs chained to its own by the text files they saved and read)."""
    apps = opened.run.chained_apps
    runs = {run_id_of(cid) or opened.run.store.run_id for cid in answer.visited}
    own = apps[opened.run.store.run_id] or opened.run_id
    return [own, *sorted({apps[r] or r for r in runs} - {own})]


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
        records = iter_records(run.store.fs, path, session_values(run.session))
        values = {(r["capture_id"], r["record_id"]): r["value"] for r in records}
    nodes = [{"capture_id": server(cid), "record_id": rid, "value": values.get((cid, rid))}
             for cid in answer.visited for rid in answer.crossed[cid]]
    links = [{"source": [server(p), pid], "target": [server(c), cid]} for p, pid, c, cid in answer.edges]
    graph["records"] = {"nodes": nodes, "edges": links}
    return graph
