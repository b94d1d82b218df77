"""Close an application's books once it has ended (run by the Celery worker)."""

from __future__ import annotations

from django.db import transaction

from lineage_server.catalog.metrics import METRIC_NAMES
from lineage_server.catalog.models import Application, Job, RunStatus, Stage
from lineage_server.task_queue import queue_task_on_commit

# The Celery task (catalog.tasks) that runs ``finalize_application``; services queue it by name.
FINALIZE_TASK = "catalog.finalize_application"

_OPEN = [RunStatus.UNKNOWN, RunStatus.RUNNING]
# What finalize writes on what the end of the application cut off; a late real end replaces it.
JOB_CUT_OFF = "The application ended before the job finished."
STAGE_CUT_OFF = "The application ended before the stage finished."


@transaction.atomic
def finalize_application(app_pk: int) -> Application | None:
    """Settle what the end of an application implies and roll up its totals.

    Jobs still open when the application ended were cut off (failed); stages a job listed but
    that never ran were skipped; stages still running were cut off. The application's status
    follows its jobs, and ``totals`` sums its stages' metrics. It clears ``finalize_pending`` in
    the same transaction: a worker killed part-way leaves the finalize owed.
    """
    app = Application.objects.select_for_update().filter(pk=app_pk).first()
    if app is None or app.ended_at is None:
        return app
    Job.objects.filter(application=app, status__in=_OPEN).update(status=RunStatus.FAILED, error=JOB_CUT_OFF)
    Stage.objects.filter(application=app, status=RunStatus.PENDING).update(status=RunStatus.SKIPPED)
    Stage.objects.filter(application=app, status__in=_OPEN).update(
        status=RunStatus.FAILED, failure_reason=STAGE_CUT_OFF
    )
    failed = app.jobs.filter(status=RunStatus.FAILED).exists()
    app.status = RunStatus.FAILED if failed else RunStatus.SUCCEEDED
    totals = dict.fromkeys(METRIC_NAMES, 0)
    for metrics in Stage.objects.filter(application=app).values_list("metrics", flat=True):
        for name in METRIC_NAMES:
            totals[name] += int(metrics.get(name) or 0)
    totals["jobs"] = app.jobs.count()
    totals["stages"] = app.stages.exclude(status=RunStatus.SKIPPED).count()
    app.totals = totals
    app.finalize_pending = False
    app.save(update_fields=["status", "totals", "finalize_pending", "updated_at"])
    return app


def requeue_pending_finalizes() -> int:
    """Queue finalize again for every application still owed one; returns how many.

    The database, not the broker, knows what is owed: a task taken by a worker that was then
    killed is gone from the filesystem broker (and hidden for an hour on Redis). Finalize is
    idempotent, so re-queuing one that is also still in the broker costs only a repeat.
    """
    pks = list(Application.objects.filter(finalize_pending=True).values_list("pk", flat=True))
    for pk in pks:
        queue_task_on_commit(FINALIZE_TASK, pk)
    return len(pks)
