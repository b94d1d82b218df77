"""Celery tasks of tracing: they only schedule; the work is in ``services``.

Services queue these by name (``lineage_server.task_queue``) and never import this module. When a
worker starts it takes back the traces it was running when it stopped, starts its Spark session
(``LINEAGE_TRACE_SPARK_AT_START``), and every ``LINEAGE_TRACE_SWEEP_SECONDS`` looks for traces
that other workers or the broker lost.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from typing import Any

from celery import shared_task
from celery.exceptions import Reject
from celery.signals import worker_ready, worker_shutdown, worker_shutting_down
from django.conf import settings
from django.db import connection
from django.utils import timezone

from lineage_server.tracing import spark
from lineage_server.tracing.services import RUN_TRACE_TASK, recover_traces, run_next_trace
from lineage_server.tracing.services.watch import give_back_running

log = logging.getLogger(__name__)
_sweeping = threading.Event()
_stopping = threading.Event()  # set by SIGTERM (warm shutdown)


@shared_task(name=RUN_TRACE_TASK, bind=True)
def run_trace_task(self: Any, trace_pk: int) -> None:
    if _stopping.is_set():  # a message taken after SIGTERM goes back to the broker for another worker
        raise Reject("the worker is stopping", requeue=True)
    # The message stands for one queued trace; which one runs is the fair queue's choice (``fair_queue``).
    run_next_trace(worker=self.request.hostname or "", spark=spark.spark_context)


@worker_ready.connect
def _on_worker_ready(sender: Any = None, **_: Any) -> None:
    name = getattr(sender, "hostname", "") or ""
    started_at = timezone.now()  # before any task of this worker: what it runs from now on is its own
    if settings.LINEAGE["TRACE_SPARK_AT_START"] and settings.LINEAGE["TRACE_MODE"] != "local":
        spark.warm_up()
    if not _sweeping.is_set():
        # In a thread, the first sweep at once: the worker takes tasks even while the database is busy.
        _sweeping.set()
        threading.Thread(target=_sweep, args=(name, started_at), name="trace-sweeper", daemon=True).start()


def _sweep(restarted_worker: str, started_at: dt.datetime) -> None:
    interval = settings.LINEAGE["TRACE_SWEEP_SECONDS"]
    first = True
    while _sweeping.is_set():
        if not first:
            threading.Event().wait(interval)
        try:
            # The first sweep also takes back what this worker was running when it stopped.
            counts = recover_traces(restarted_worker=restarted_worker if first else "", started_at=started_at)
            if any(counts.values()):
                log.info("traces recovered: %s", counts)
        except Exception:
            log.exception("trace sweep failed")
        finally:
            first = False
            connection.close()


@worker_shutting_down.connect
def _on_worker_shutting_down(**_: Any) -> None:
    # A warm shutdown waits for the running trace: give it back to the queue so that its work stops
    # at once; the next sweep of any worker (this one's first, when it starts again) sends it again.
    # Where tasks run in this process (the threads pool, as settings choose, or --pool solo); prefork
    # children would finish theirs, within the time limit.
    _stopping.set()
    try:
        for pk in give_back_running():
            log.info("trace %s: given back to the queue, the worker is stopping", pk)
    except Exception:
        log.exception("could not give back the running traces")
    finally:
        connection.close()


@worker_shutdown.connect
def _on_worker_shutdown(**_: Any) -> None:
    _sweeping.clear()
    spark.stop()
