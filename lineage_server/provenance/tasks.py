"""Celery tasks of provenance graphs: they only schedule; the work is in ``services``.

Index builds run on the worker's warm Spark session (``lineage_server.tracing.spark``, on
``LINEAGE_SPARK_MASTER``), the one trace steps use.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from lineage_server.provenance.services import BUILD_INDEX_TASK, run_index_build
from lineage_server.tracing import spark


@shared_task(name=BUILD_INDEX_TASK, bind=True)
def build_index_task(self: Any, build_pk: int) -> None:
    run_index_build(build_pk, worker=self.request.hostname or "", spark=spark.spark_context)
