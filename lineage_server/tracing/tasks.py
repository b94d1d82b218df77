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
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import connection
from django.utils import timezone

from lineage_server.tracing import spark
from lineage_server.tracing.services import RUN_TRACE_TASK, recover_traces, run_trace

log = logging.getLogger(__name__)
_sweeping = threading.Event()


@shared_task(name=RUN_TRACE_TASK, bind=True)
def run_trace_task(self: Any, trace_pk: int) -> None:
    run_trace(trace_pk, worker=self.request.hostname or "", spark=spark.spark_context)


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


@worker_shutdown.connect
def _on_worker_shutdown(**_: Any) -> None:
    _sweeping.clear()
    spark.stop()
