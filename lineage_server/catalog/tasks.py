"""Celery tasks of the catalog: they only schedule; the work is in ``services``."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.db import connections

from lineage_server.catalog.models import Application
from lineage_server.catalog.services import finalize_application

log = logging.getLogger(__name__)


@shared_task(name="catalog.finalize_application")
def finalize_application_task(app_pk: int) -> None:
    finalize_application(app_pk)


def requeue_pending_finalizes() -> int:
    """Queue finalize again for every application still owed one; returns how many.

    The database, not the broker, knows what is owed: a task taken by a worker that was then
    killed is gone from the filesystem broker (and hidden for an hour on Redis). Finalize is
    idempotent, so re-queuing one that is also still in the broker costs only a repeat.
    """
    pks = list(Application.objects.filter(finalize_pending=True).values_list("pk", flat=True))
    for pk in pks:
        finalize_application_task.delay(pk)
    return len(pks)


@worker_ready.connect
def _requeue_on_worker_start(**_: Any) -> None:
    count = requeue_pending_finalizes()
    # With a prefork pool the main process runs no task: it need not keep a connection open.
    connections.close_all()
    if count:
        log.info("re-queued finalize for %d applications still owed one", count)
