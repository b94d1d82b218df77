"""Claiming a queued row of work (a trace, an index build) for a worker, and failing it.

A row of work has ``status`` (queued -> running -> succeeded / failed), ``started_at``,
``finished_at``, ``error`` and ``worker``. The claim is a conditional update under the row's lock
(queued -> running), so a message delivered twice runs the work once; a failure is written only
while the row is still running, so it never overwrites a cancellation.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import transaction
from django.db.models import Model, QuerySet
from django.utils import timezone

QUEUED, RUNNING, FAILED = "queued", "running", "failed"  # the status values every row of work has

M = TypeVar("M", bound=Model)


def claim_queued(rows: QuerySet[M], pk: int, worker: str, *,
                 refusal: Callable[[Any], str | None] | None = None,
                 also: Callable[[Any, dt.datetime], list[str]] | None = None) -> M | None:
    """Row ``pk`` of ``rows``, marked running for ``worker``; None when it is not queued.

    Args:
        rows: the model's rows (with any ``select_related`` the worker wants).
        pk: the row.
        worker: the worker's name, kept on the row (cut to 200 characters).
        refusal: why the queued row fails instead of running (it is then marked failed with that
            error and None is returned), or None to run it.
        also: sets the model's own fields of a claim on the row at that time; returns their names.
    """
    with transaction.atomic():
        row: Any = rows.select_for_update().filter(pk=pk).first()
        if row is None or row.status != QUEUED:
            return None
        now = timezone.now()
        refused = refusal(row) if refusal is not None else None
        if refused is not None:
            row.status = FAILED
            row.finished_at = now
            row.error = refused
            row.save(update_fields=["status", "finished_at", "error"])
            return None
        row.status = RUNNING
        row.started_at = row.started_at or now
        row.worker = worker[:200]
        fields = also(row, now) if also is not None else []
        row.save(update_fields=["status", "started_at", "worker", *fields])
        return row


def fail_running(model: type[Model], pk: int, message: str) -> None:
    """Marks row ``pk`` of ``model`` failed with ``message``, if it is still running."""
    running = model._default_manager.filter(pk=pk, status=RUNNING)
    running.update(status=FAILED, error=message, finished_at=timezone.now())
