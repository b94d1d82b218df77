"""Answering a what-if in the worker (``dispatch.run_trace`` hands what-ifs here once claimed).

Propagates the deletion over the run's record lineage (the capture agent's ``what_if_deleted``,
with progress per capture point), then replays the job kept in the run's folder on the worker's
Spark session for the exact classes and new values (``query.stored_job``; the kept functions load
only inside Spark tasks). When replay is not possible the result says why and keeps the classes
lineage decides. The answer goes to the lineage store (``query.whatif_results``); the row keeps
the counts per capture point and fate, the first changed records, the replay's status and timings.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from capture_agent.record.errors import ReplayNotPossible
from capture_agent.record.query.replay_strategies import report
from capture_agent.record.query.whatif import Classes, Impact, what_if_deleted
from capture_agent.record.query.whatif_results import WhatIfSummary, write_whatif
from lineage_server.tracing.models import Trace, TraceStatus
from lineage_server.tracing.services.failures import TraceFailure, lineage_failures
from lineage_server.tracing.services.opened_run import FIRST_PAGE, Opened, close_books, open_run
from lineage_server.tracing.services.watch import Watch

log = logging.getLogger("lineage_server.tracing")
NO_SPARK = "this worker has no Spark session to replay the job on"


def answer_whatif(trace: Trace, watch: Watch, spark: Callable[[], Any] | None) -> None:
    with watch.interruptible():
        # a replay runs on Spark, whatever LINEAGE_TRACE_MODE says; Spark starts at the replay
        opened = open_run(trace, watch, spark)
        run, clock = opened.run, opened.clock
        with lineage_failures(opened.run_dir):
            deleted = opened.selection(trace)
            if not any(deleted.values()):
                raise TraceFailure("the selection matches no records: nothing would be deleted")
            clock.lap("select_ms")
            target = None if trace.target in ("", "end") else opened.local(trace.target)
            impact = what_if_deleted(run.session, deleted, target, progress=watch.progress)
            clock.lap("propagate_ms")
            classes, why_not = _replay(impact, watch, opened.sc)
            clock.lap("replay_ms")
            location = opened.result_path(trace)
            summary = write_whatif(impact, classes, location, FIRST_PAGE)
            clock.lap("store_ms")
    uri = run.store.fs.uri(location)
    close_books(trace, _finish(trace, opened, impact, summary, uri, why_not), uri)


def _replay(impact: Impact, watch: Watch, sc: Any) -> tuple[Classes | None, str | None]:
    """The exact classes by replay, or (None, why not)."""
    watch.check()
    try:
        return impact.classes(), None
    except ReplayNotPossible as exc:
        return None, NO_SPARK if sc is None else str(exc)
    except Exception:
        watch.check()  # a replay whose Spark jobs a cancellation stopped
        raise


def _finish(trace: Trace, opened: Opened, impact: Impact, summary: WhatIfSummary, location: str,
            why_not: str | None) -> bool:
    now = timezone.now()
    run, server = opened.run, opened.server
    timings = opened.timings(trace)
    points = []
    for cid in sorted(impact.fates, key=lambda c: run.store.point(c).seq):
        point, fates = run.store.point(cid), impact.fates[cid]
        entry = {"capture_id": server(cid), "kind": point.kind, "op": point.op, "stage_id": point.stage_id,
                 "rdd_id": point.rdd_id, "records": point.rows, "deleted": len(fates.deleted),
                 "changed": len(fates.changed), "unchanged": max(point.rows - len(fates.deleted) - len(fates.changed),
                                                                 0)}
        if cid == impact.target:
            entry.update(summary.output)
        points.append(entry)
    reached = set(impact.fates)
    edges = [{"source": server(parent), "target": server(cid)}
             for cid in reached for parent in run.store.point(cid).parents if parent in reached]
    summary_json = {
        "run_id": opened.run_id,
        "target": server(impact.target),
        "deleted_at": {server(cid): len(ids) for cid, ids in impact.seeds.items()},
        "replay": {"done": why_not is None, "reason": why_not,
                   **(run.job.report() if why_not is None and run.job is not None else report(None, None))},
        "points": points,
        "output": summary.output,
        "first_changed": [{**r, "capture_id": server(r["capture_id"])} for r in summary.first_changed],
        "timings": timings,
    }
    updated = Trace.objects.filter(pk=trace.pk, status=TraceStatus.RUNNING).update(
        status=TraceStatus.SUCCEEDED, finished_at=now, result_location=location, result_count=summary.count,
        summary=summary_json, graph={"points": points, "edges": edges}, points_done=len(points),
        points_total=len(points), records_so_far=summary.count, heartbeat_at=now,
    )
    return updated == 1
