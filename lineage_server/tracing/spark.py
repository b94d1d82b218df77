"""The trace worker's one warm Spark session, on ``LINEAGE_SPARK_MASTER``, shared by every trace it runs.

Traces run side by side in the worker's threads (``LINEAGE_TRACE_CONCURRENCY``); PySpark pins each
Python thread to a JVM thread, so a trace's job group and scheduler pool are its thread's alone.
The session schedules FAIR: each trace's jobs go to its team's pool (``pool_of``), so one team's
heavy trace does not queue another team's jobs behind its tasks; within a pool, first come first.

Started at the first trace that needs Spark, or when the worker starts
(``LINEAGE_TRACE_SPARK_AT_START``), and stopped when the worker stops. Executors run
``PYSPARK_PYTHON`` when it is set, else this worker's own interpreter (it has what the trace steps
need: pyarrow and pyroaring); the steps' code travels with the tasks.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings

log = logging.getLogger("lineage_server.tracing")
_lock = threading.Lock()
_context: Any = None


def spark_context() -> Any:
    """The worker's SparkContext, started on first use."""
    global _context
    with _lock:
        if _context is None or _context._jsc is None:
            from pyspark import SparkConf, SparkContext

            master = settings.LINEAGE["SPARK_MASTER"]
            conf = (
                SparkConf()
                .setMaster(master)
                .setAppName("lineage-trace-worker")
                .set("spark.ui.showConsoleProgress", "false")
                .set("spark.ui.enabled", "false")
                .set("spark.pyspark.python", os.environ.get("PYSPARK_PYTHON") or sys.executable)
                .set("spark.scheduler.mode", "FAIR")
            )
            _context = SparkContext.getOrCreate(conf)
            _context.setLogLevel("ERROR")
            log.info("trace worker: Spark session started on %s", master)
        return _context


class SparkOnDemand:
    """The worker's SparkContext as one trace sees it, started (or joined, when warm) at its first
    use: a trace whose steps all run in the worker's process never waits on a JVM. Every attribute
    is the context's; the first use also calls ``on_start`` with it, in the using thread (the trace's:
    its job group and scheduler pool are that thread's)."""

    def __init__(self, context: Callable[[], Any], on_start: Callable[[Any], None]) -> None:
        self._context = context
        self._on_start: Callable[[Any], None] | None = on_start
        self._started: Any = None
        self._lock = threading.Lock()

    @property
    def started(self) -> bool:
        return self._started is not None

    def context(self) -> Any:
        """The SparkContext, started now if it was not."""
        with self._lock:
            if self._started is None:
                sc = self._context()
                on_start, self._on_start = self._on_start, None
                self._started = sc
                if on_start is not None:
                    on_start(sc)
            return self._started

    def __getattr__(self, name: str) -> Any:
        return getattr(self.context(), name)


def pool_of(team_id: int) -> str:
    """The FAIR scheduler pool of a team's trace jobs (created by Spark at its first job, weight 1)."""
    return f"lineage-team-{team_id}"


def warm_up() -> None:
    """Starts the session in the background (the worker starts taking tasks meanwhile)."""

    def start() -> None:
        try:
            spark_context()
        except Exception as exc:  # noqa: BLE001 - a trace that needs Spark will report it
            log.warning("trace worker: could not start Spark on %s: %s", settings.LINEAGE["SPARK_MASTER"], exc)

    threading.Thread(target=start, name="spark-warm-up", daemon=True).start()


def stop() -> None:
    global _context
    with _lock:
        if _context is not None:
            _context.stop()
            _context = None
