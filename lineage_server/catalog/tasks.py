"""Celery tasks of the catalog: they only schedule; the work is in ``services``.

Services queue these by name (``lineage_server.task_queue``) and never import this module.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.db import connections

from lineage_server.catalog.services import FINALIZE_TASK, finalize_application, requeue_pending_finalizes

log = logging.getLogger(__name__)


@shared_task(name=FINALIZE_TASK)
def finalize_application_task(app_pk: int) -> None:
    finalize_application(app_pk)


@worker_ready.connect
def _requeue_on_worker_start(**_: Any) -> None:
    count = requeue_pending_finalizes()
    # With a prefork pool the main process runs no task: it need not keep a connection open.
    connections.close_all()
    if count:
        log.info("re-queued finalize for %d applications still owed one", count)
