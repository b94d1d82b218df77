"""Asking a diff of two runs of one job: the newer run, the older one (given, or the previous run
of the same job), the output compared and, optionally, the one output key explained."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from lineage_server.catalog.models import Application, CapturePoint
from lineage_server.task_queue import queue_task_on_commit
from lineage_server.tracing.models import Trace, TraceKind
from lineage_server.tracing.services.asking import RUN_TRACE_TASK
from lineage_server.tracing.services.questions import TraceQuestionError, last_output

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def code_identity(app: Application) -> list[tuple[str, str, list[str]]]:
    """What makes two runs runs of one job: their capture points' ids (sequence, kind and
    operation, without the run id), kinds and parents."""
    points = CapturePoint.objects.filter(application=app).order_by("capture_id")
    return [(_local(p.capture_id), p.kind, [_local(c) for c in p.parent_capture_ids]) for p in points]


def _local(server_id: str) -> str:
    return server_id.split("/", 1)[1] if "/" in server_id else server_id


def previous_run(app: Application) -> Application | None:
    """The latest run before ``app`` of the same job in its team: same application name and the
    same capture points."""
    identity = code_identity(app)
    earlier = Application.objects.filter(team=app.team_id, name=app.name, created_at__lt=app.created_at) \
        .exclude(pk=app.pk).order_by("-created_at", "-id")
    return next((other for other in earlier[:50] if code_identity(other) == identity), None)


@transaction.atomic
def ask_diff(app: Application, *, by: User, compared_with: Application | None = None,
             capture_point: str | None = None, key: Any = None, key_fields: list[str] | None = None,
             name: str = "", note: str = "", runs: QuerySet[Application] | None = None,
             rerun_of: Trace | None = None) -> Trace:
    """A new diff of ``app`` against ``compared_with`` (default: the previous run of the same job),
    queued. ``runs``: the applications the asker may compare with (their teams').

    Raises:
        TraceQuestionError: naming the field that is wrong (nothing is queued).
    """
    if compared_with is None:
        compared_with = previous_run(app)
        if compared_with is None:
            raise TraceQuestionError("compared_with", f"{app.app_id} has no earlier run of the same job "
                                     f"(application name {app.name!r} and the same capture points) in its team")
    elif runs is not None and not runs.filter(pk=compared_with.pk).exists():
        raise TraceQuestionError("compared_with", f"no application {compared_with.app_id!r} in your teams")
    if compared_with.pk == app.pk:
        raise TraceQuestionError("compared_with", "a run cannot be compared with itself")
    if code_identity(compared_with) != code_identity(app):
        raise TraceQuestionError("compared_with", f"{compared_with.app_id} is not a run of the same job as "
                                 f"{app.app_id}: their capture points differ")
    if capture_point:
        point = CapturePoint.objects.filter(application=app, capture_id=capture_point).first()
        if point is None or point.kind != "output":
            raise TraceQuestionError("capture_point", f"{capture_point!r} is not an output capture point of "
                                     f"{app.app_id}")
    else:
        point = last_output(app)
        if point is None:
            raise TraceQuestionError("application", f"{app.app_id} has no captured output to compare")
    selection = {"compared_with": compared_with.app_id, "key": key, "key_fields": key_fields or None}
    digest = hashlib.sha256(json.dumps([point.capture_id, selection], sort_keys=True, default=str).encode())
    trace = Trace(application=app, compared_with=compared_with, created_by=by, created_by_label=by.get_username(),
                  kind=TraceKind.DIFF, direction="forward", start_capture_id=point.capture_id, selection=selection,
                  target=point.capture_id, question_key=digest.hexdigest(), name=name, note=note, rerun_of=rerun_of,
                  sent_at=timezone.now())
    trace.save()
    queue_task_on_commit(RUN_TRACE_TASK, trace.pk)
    return trace
