"""What users do to traces in the history: name, annotate, pin, cancel, delete (audited)."""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from capture_agent.record.storage.fs import StoreFS
from lineage_server.accounts.services import record_audit
from lineage_server.tracing.models import Trace, TraceStatus

log = logging.getLogger("lineage_server.tracing")
EDITABLE = ("name", "note", "pinned")


class TraceStateError(ValueError):
    """The trace is not in a state that allows this (a 409)."""


@transaction.atomic
def update_trace(trace: Trace, *, by: AbstractBaseUser, **changes: Any) -> Trace:
    """Sets the trace's name, note or pin."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise ValueError(f"only {', '.join(EDITABLE)} can be changed, not {sorted(unknown)}")
    for name, value in changes.items():
        setattr(trace, name, value)
    trace.save(update_fields=list(changes))
    return trace


@transaction.atomic
def cancel_trace(trace: Trace, *, by: AbstractBaseUser) -> Trace:
    """Cancels a queued trace, or asks the worker running it to stop (it stops between capture
    points, and cancels its Spark jobs at once).

    Raises:
        TraceStateError: the trace has already finished.
    """
    locked = Trace.objects.select_for_update().get(pk=trace.pk)
    if not locked.is_open:
        raise TraceStateError(f"trace {trace.pk} has already {locked.status}; only queued or running traces can be "
                              "cancelled")
    locked.status = TraceStatus.CANCELLED
    locked.finished_at = timezone.now()
    locked.error = f"cancelled by {by.get_username()}"
    locked.save(update_fields=["status", "finished_at", "error"])
    return locked


@transaction.atomic
def delete_trace(trace: Trace, *, by: AbstractBaseUser) -> None:
    """Deletes the trace (audited) and, once that commits, its result file unless another trace
    (one that reused the answer) still shows it."""
    team = trace.application.team
    location = trace.result_location
    record_audit("trace.delete", actor=by, team=team, target=f"trace {trace.pk}",
                 application=trace.application.app_id, name=trace.name, result=location)
    trace.delete()
    if location and not Trace.objects.filter(result_location=location).exists():
        transaction.on_commit(lambda: remove_result(location))


def remove_result(location: str) -> None:
    """Deletes a result file of the lineage store (logged, never raised: the row is already gone)."""
    try:
        store = StoreFS.resolve(location)
        store.delete_file(store.root)
    except (OSError, ValueError) as exc:
        log.warning("could not delete trace result %s: %s", location, exc)
