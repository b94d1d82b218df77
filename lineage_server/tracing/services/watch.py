"""The watcher beside a running trace: heartbeat, cancellation, time limit, and stopping the work.

A thread polls the trace's row every second. When the trace is no longer running (a user
cancelled it, or recovery took it back) or it has run past ``LINEAGE_TRACE_TIME_LIMIT_SECONDS``
(then the watcher marks it failed, naming the limit), the watcher stops its work wherever it
runs: the trace's Spark job group is cancelled (its running tasks interrupted), and a step
running in the worker's own process is interrupted by raising ``TraceCancelled`` in the trace's
thread (Python delivers it at the next bytecode: a step in one long call of native code is not
interrupted before that call returns). A step that still has not stopped ``GRACE_SECONDS``
after it left its Spark jobs (Spark's own cancellation of a job gets ``SPARK_GRACE_SECONDS``: on a
busy machine killing its tasks takes longer than a few seconds) cannot be interrupted: the
watcher ends the worker process (exit code ``EXIT_STUCK``) so that its supervisor starts a fresh
one (``scripts/run.sh``'s loop, the compose file's restart policy, or Celery's prefork pool, which
replaces a child that exits); the trace's row already says why it ended, and the next trace runs
on the new process.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from capture_agent.record.query.questions import TraceCancelled
from lineage_server.tracing.models import Trace, TraceStatus

log = logging.getLogger("lineage_server.tracing")

POLL_SECONDS = 1.0  # how soon a cancellation or the time limit is seen
GRACE_SECONDS = 5.0  # how long an interrupted step may take to stop before the process is replaced
SPARK_GRACE_SECONDS = 120.0  # how long a cancelled Spark job of the step may take to end
EXIT_STUCK = 75  # the worker's exit code when it ended itself to stop a step (EX_TEMPFAIL: start it again)
TIME_LIMIT_SETTING = "LINEAGE_TRACE_TIME_LIMIT_SECONDS"
_active: set[Watch] = set()  # the watches of the traces this process runs now


class Watch:
    """Beats the heartbeat, watches for a cancellation and the time limit, and stops the trace's work."""

    def __init__(self, pk: int, time_limit: float | None = None) -> None:
        self.pk = pk
        self.group = f"lineage-trace-{pk}-{uuid.uuid4().hex[:8]}"
        self.sc: Any = None
        self.cancelled = threading.Event()
        self.time_limit = float(settings.LINEAGE["TRACE_TIME_LIMIT_SECONDS"] if time_limit is None else time_limit)
        self.interval = max(1.0, min(5.0, settings.LINEAGE["TRACE_STALE_SECONDS"] / 6))
        self._stop = threading.Event()
        self._lock = threading.Lock()  # guards ``_work_thread`` against an interrupt racing the work's end
        self._work_thread: int | None = None  # the thread id while it runs interruptible work
        self._stopped_at: float | None = None  # when the watcher began stopping the work
        self._grace_from = 0.0  # since when the stopped step runs outside any Spark job of its group
        self._interrupted = False
        self._thread = threading.Thread(target=self._watch, name=f"trace-{pk}-watch", daemon=True)

    def __enter__(self) -> Watch:
        self._started = time.monotonic()
        self._thread.start()
        _active.add(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _active.discard(self)
        self._stop.set()
        self._thread.join()
        if self.sc is not None:  # the group is the thread's: the thread's next jobs are not this trace's
            self.sc.setLocalProperty("spark.jobGroup.id", None)
            self.sc.setLocalProperty("spark.job.description", None)
            self.sc.setLocalProperty("spark.job.interruptOnCancel", None)
            self.sc.setLocalProperty("spark.scheduler.pool", None)

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """The work the watcher may interrupt in this thread (not the final update of the row)."""
        self.check_flag()
        with self._lock:
            self._work_thread = threading.get_ident()
        try:
            yield
        finally:
            with self._lock:
                self._work_thread = None
                # An interrupt sent but not yet delivered must not land after the work has ended.
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()), None)
        self.check_flag()

    @contextmanager
    def uninterruptible(self) -> Iterator[None]:
        """Work inside ``interruptible`` that must not be interrupted (starting the worker's Spark: an
        exception in the middle would leave it half-started); a cancellation meanwhile is raised after it."""
        with self._lock:
            work, self._work_thread = self._work_thread, None
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(threading.get_ident()), None)
        try:
            yield
        finally:
            if not self.cancelled.is_set():  # else TraceCancelled below, before it is interruptible again
                with self._lock:
                    self._work_thread = work
        self.check_flag()

    # ------------------------------------------------------------------ the watcher's thread
    def _watch(self) -> None:
        last_beat = time.monotonic()
        try:
            while not self._stop.wait(POLL_SECONDS):
                now = time.monotonic()
                if now - last_beat >= self.interval:
                    Trace.objects.filter(pk=self.pk, status=TraceStatus.RUNNING).update(heartbeat_at=timezone.now())
                    last_beat = now
                if self._stopped_at is None:
                    if now - self._started > self.time_limit:
                        self._fail_over_time()
                    if self._is_cancelled():
                        self._stop_work(now)
                elif self._in_spark_job():  # Spark is killing its tasks; the process is not stuck
                    if now - self._stopped_at > SPARK_GRACE_SECONDS:
                        self._replace_process()
                    self._grace_from = now
                elif now - self._grace_from > GRACE_SECONDS:
                    self._replace_process()
                else:
                    self._interrupt()
        except Exception:
            log.exception("trace %s: watcher failed", self.pk)
        finally:
            connection.close()

    def _fail_over_time(self) -> None:
        limit = int(self.time_limit)
        Trace.objects.filter(pk=self.pk, status=TraceStatus.RUNNING).update(
            status=TraceStatus.FAILED, finished_at=timezone.now(),
            error=f"stopped: it ran past the time limit of {limit} s ({TIME_LIMIT_SETTING}); narrow the "
                  "selection, or ask an administrator to raise the limit",
        )
        log.warning("trace %s: stopped at the time limit of %s s", self.pk, limit)

    def _stop_work(self, now: float) -> None:
        self._stopped_at = self._grace_from = now
        self.cancelled.set()
        if self.sc is not None:
            self.sc.cancelJobGroup(self.group)
        self._interrupt()

    def _interrupt(self) -> None:
        """Raises TraceCancelled in the trace's thread once, unless it waits on a Spark job of its group
        (the job's cancellation ends that wait; an exception in the middle of a py4j call would only
        break the connection)."""
        if self._interrupted or self._in_spark_job():
            return
        with self._lock:
            if self._work_thread is not None and not self._stop.is_set():
                exc = ctypes.py_object(TraceCancelled)
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._work_thread), exc)
                self._interrupted = True

    def _in_spark_job(self) -> bool:
        if self.sc is None:
            return False
        tracker = self.sc.statusTracker()
        return bool(set(tracker.getJobIdsForGroup(self.group)) & set(tracker.getActiveJobsIds()))

    def _replace_process(self) -> None:
        with self._lock:
            if self._work_thread is None or self._stop.is_set():
                return
        log.critical("trace %s: its step did not stop %.0f s after it was told to (a long call of native "
                     "code?); ending this worker process so that a fresh one takes the next trace", self.pk,
                     GRACE_SECONDS)
        for handler in logging.getLogger().handlers + log.handlers:
            handler.flush()
        os._exit(EXIT_STUCK)

    def give_back(self) -> bool:
        """Puts the running trace back in the queue (the worker is stopping); the watcher then stops
        its work as for a cancellation. False when it was no longer running."""
        return Trace.objects.filter(pk=self.pk, status=TraceStatus.RUNNING).update(
            status=TraceStatus.QUEUED, sent_at=None, heartbeat_at=None) == 1  # sent again by the next sweep

    # ------------------------------------------------------------------ the trace's thread
    def _is_cancelled(self) -> bool:
        status = Trace.objects.filter(pk=self.pk).values_list("status", flat=True).first()
        return status != TraceStatus.RUNNING

    def check_flag(self) -> None:
        """Raises TraceCancelled once the watcher has seen the trace stop (no query: cheap in loops)."""
        if self.cancelled.is_set():
            raise TraceCancelled(f"trace {self.pk} was cancelled")

    def check(self) -> None:
        """Raises TraceCancelled once the trace is no longer running (cancelled, failed at its time
        limit, or taken back)."""
        if self.cancelled.is_set() or self._is_cancelled():
            self.cancelled.set()
            raise TraceCancelled(f"trace {self.pk} was cancelled")

    def progress(self, done: int, total: int, records: int) -> None:
        Trace.objects.filter(pk=self.pk, status=TraceStatus.RUNNING).update(
            points_done=done, points_total=total, records_so_far=records, heartbeat_at=timezone.now()
        )
        self.check()


def give_back_running() -> list[int]:
    """The traces this process is running, put back in the queue (their work then stops within
    seconds): what a worker asked to stop (SIGTERM) does, instead of running them to their end."""
    return [watch.pk for watch in list(_active) if watch.give_back()]
