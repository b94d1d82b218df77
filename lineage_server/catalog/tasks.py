"""Celery tasks of the catalog: they only schedule; the work is in ``services``.

Services queue these by name (``lineage_server.task_queue``) and never import this module. A
starting worker queues the finalizes still owed, and runs the ingest applier: a thread that applies
the accepted ingest batches no request applied (``services.apply_accepted``), at once (those a
stopped server left) and then whenever some are waiting.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.db import close_old_connections, connection, connections

from lineage_server.catalog.services import (
    FINALIZE_TASK,
    apply_accepted,
    finalize_application,
    requeue_pending_finalizes,
)

log = logging.getLogger(__name__)
APPLIER_POLL_SECONDS = 0.1  # how long an accepted batch no request applied may wait
_applying = threading.Event()


@shared_task(name=FINALIZE_TASK)
def finalize_application_task(app_pk: int) -> None:
    finalize_application(app_pk)


@worker_ready.connect
def _on_worker_ready(**_: Any) -> None:
    count = requeue_pending_finalizes()
    # Tasks run in the pool's threads, each with its own connection: this thread need not keep one open.
    connections.close_all()
    if count:
        log.info("re-queued finalize for %d applications still owed one", count)
    if not _applying.is_set():
        _applying.set()
        threading.Thread(target=_apply_accepted_batches, name="ingest-applier", daemon=True).start()


def _apply_accepted_batches() -> None:
    first = True
    while _applying.is_set():
        try:
            close_old_connections()
            applied = apply_accepted()
            if first and applied:
                log.info("applied %d accepted ingest events a stopped server left", applied)
        except Exception:
            log.exception("applying accepted ingest batches failed")
            connection.close()
            applied = 0
        first = False
        if not applied:
            threading.Event().wait(APPLIER_POLL_SECONDS)


@worker_shutdown.connect
def _on_worker_shutdown(**_: Any) -> None:
    _applying.clear()
