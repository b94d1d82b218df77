"""Traces a worker or the broker lost: found from the database, which knows what is owed.

A running trace whose heartbeat went stale (its worker was killed) goes back to the queue, or
fails after ``MAX_ATTEMPTS``; so does one left running by a worker that has just restarted (one
whose last heartbeat predates the restart: the traces it has taken since are its own). A
queued trace the broker may have lost (Redis keeps nothing on disk; a restart drops its queue) is
sent again once it has waited ``LINEAGE_TRACE_STALE_SECONDS``: the claim runs a trace once however
many messages ask for it.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from lineage_server.task_queue import queue_task_on_commit
from lineage_server.tracing.models import Trace, TraceStatus
from lineage_server.tracing.services.asking import RUN_TRACE_TASK
from lineage_server.tracing.services.dispatch import MAX_ATTEMPTS, STOPPED_TOO_OFTEN


def recover_traces(*, restarted_worker: str = "", started_at: dt.datetime | None = None,
                   now: dt.datetime | None = None) -> dict[str, int]:
    """Re-queues or fails stale running traces and re-sends lost queued ones; returns the counts.

    Args:
        restarted_worker: a worker that has just started (at ``started_at``, default now): the
            traces still marked as running on it with a heartbeat from before then were cut off,
            however recent that heartbeat.
    """
    now = now or timezone.now()
    stale = now - dt.timedelta(seconds=settings.LINEAGE["TRACE_STALE_SECONDS"])
    cut_off = Q(heartbeat_at__lt=stale) | Q(heartbeat_at__isnull=True)
    if restarted_worker:
        cut_off |= Q(worker=restarted_worker, heartbeat_at__lt=started_at or now)
    running = Q(status=TraceStatus.RUNNING) & cut_off
    lost = Q(status=TraceStatus.QUEUED) & (Q(sent_at__lt=stale) | Q(sent_at__isnull=True))
    # A read first: with nothing owed, no write lock is taken (SQLite's is the whole database's).
    if not Trace.objects.filter(running | lost).exists():
        return {"requeued": 0, "failed": 0, "resent": 0}
    with transaction.atomic():
        return _recover(running, lost, now)


def _recover(running: Q, lost: Q, now: dt.datetime) -> dict[str, int]:
    counts = {"requeued": 0, "failed": 0, "resent": 0}
    for trace in Trace.objects.select_for_update().filter(running):
        if trace.attempts >= MAX_ATTEMPTS:
            trace.status = TraceStatus.FAILED
            trace.finished_at = now
            trace.error = STOPPED_TOO_OFTEN.format(attempts=trace.attempts)
            counts["failed"] += 1
        else:
            trace.status = TraceStatus.QUEUED
            trace.sent_at = now
            queue_task_on_commit(RUN_TRACE_TASK, trace.pk)
            counts["requeued"] += 1
        trace.save(update_fields=["status", "finished_at", "error", "sent_at"])
    for trace in Trace.objects.select_for_update().filter(lost):
        trace.sent_at = now
        trace.save(update_fields=["sent_at"])
        queue_task_on_commit(RUN_TRACE_TASK, trace.pk)
        counts["resent"] += 1
    return counts
