"""Asking a trace: the row is the work owed; the Celery task is sent once the transaction commits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from lineage_server.catalog.models import Application
from lineage_server.task_queue import queue_task_on_commit
from lineage_server.tracing.models import Direction, Trace, TraceKind, TraceStatus
from lineage_server.tracing.services.questions import Question, check_question

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The Celery task (tracing.tasks) that runs ``run_trace``; services queue it by name.
RUN_TRACE_TASK = "tracing.run_trace"


@transaction.atomic
def ask_trace(app: Application, *, by: User, direction: str, selection: Any,
              capture_point: str | None = None, target: str | None = None, name: str = "", note: str = "",
              recompute: bool = False, seeds: QuerySet[Trace] | None = None, rerun_of: Trace | None = None,
              kind: str = TraceKind.TRACE) -> Trace:
    """A new trace (or, ``kind``, what-if) of ``app``, queued; or, when the same question was
    answered on the same lineage and ``recompute`` is false, a new one holding that stored answer at
    once (``answered_from``).

    Raises:
        TraceQuestionError: the question cannot be asked (nothing is queued).
    """
    question = check_question(app, direction=direction, capture_point=capture_point, selection=selection,
                              target=target, seeds=seeds if seeds is not None else Trace.objects.none(), kind=kind)
    key = question.key()
    trace = Trace(
        application=app, created_by=by, created_by_label=by.get_username(), kind=question.kind,
        direction=question.direction,
        start_capture_id=question.start.capture_id if question.start else "", selection=question.selection,
        target=question.target, question_key=key, seed=question.seed, rerun_of=rerun_of, name=name, note=note,
    )
    earlier = None if recompute else _stored_answer(app, key)
    if earlier is not None:
        now = timezone.now()
        trace.answered_from = earlier
        trace.status = TraceStatus.SUCCEEDED
        trace.started_at = trace.finished_at = now
        trace.result_location = earlier.result_location
        trace.result_count = earlier.result_count
        trace.summary = earlier.summary
        trace.graph = earlier.graph
        trace.points_done = trace.points_total = earlier.points_total
        trace.records_so_far = earlier.records_so_far
        trace.save()
        return trace
    trace.sent_at = timezone.now()
    trace.save()
    queue_task_on_commit(RUN_TRACE_TASK, trace.pk)
    return trace


def _stored_answer(app: Application, key: str) -> Trace | None:
    return (
        Trace.objects.filter(application=app, question_key=key, status=TraceStatus.SUCCEEDED)
        .exclude(result_location="")
        .order_by("-finished_at", "-id")
        .first()
    )


def ask_whatif(app: Application, *, by: User, selection: Any, capture_point: str | None = None,
               target: str | None = None, name: str = "", note: str = "", recompute: bool = False,
               seeds: QuerySet[Trace] | None = None, rerun_of: Trace | None = None) -> Trace:
    """A new what-if of ``app``: what deleting the selected records would do to an output."""
    return ask_trace(app, by=by, direction=Direction.FORWARD, selection=selection, capture_point=capture_point,
                     target=target, name=name, note=note, recompute=recompute, seeds=seeds, rerun_of=rerun_of,
                     kind=TraceKind.WHATIF)


def rerun_trace(trace: Trace, *, by: User, seeds: QuerySet[Trace]) -> Trace:
    """A new trace (or what-if) asking ``trace``'s question again (computed afresh), linked to it."""
    selection: dict[str, Any] = dict(trace.selection)
    if "trace" in selection and selection.get("capture_point") is None:
        selection.pop("capture_point")
    return ask_trace(
        trace.application, by=by, direction=trace.direction, selection=selection,
        capture_point=trace.start_capture_id or None, target=trace.target, name=trace.name, note=trace.note,
        recompute=True, seeds=seeds, rerun_of=trace, kind=trace.kind,
    )


def question_of(question: Question) -> dict[str, Any]:
    """How a checked question reads back (for messages and tests)."""
    return {"direction": question.direction, "selection": question.selection, "target": question.target,
            "capture_point": question.start.capture_id if question.start else None}
