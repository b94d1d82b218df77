"""Running a queued trace, what-if or diff in the worker: claim its row, hand it to its kind's
answer (``trace_answer``, ``whatif_answer``, ``diff_answer``), and end it failed or cancelled
when the answer does not come.

``run_trace`` is what the Celery task calls, and is tested directly. The claim is a conditional
update (queued -> running), so a message delivered twice runs the trace once. While it runs, a
watcher thread beats the trace's heartbeat (a worker killed mid-trace is found by it going stale,
``recovery``), and stops the trace's work within seconds of a user cancelling it or of its time
limit (``watch``).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from typing import Any

from capture_agent.record.query.questions import TraceCancelled
from lineage_server.claims import claim_queued, fail_running
from lineage_server.tracing.models import Trace, TraceKind
from lineage_server.tracing.services.diff_answer import answer_diff
from lineage_server.tracing.services.failures import TraceFailure
from lineage_server.tracing.services.trace_answer import answer_trace
from lineage_server.tracing.services.watch import Watch
from lineage_server.tracing.services.whatif_answer import answer_whatif

log = logging.getLogger("lineage_server.tracing")

MAX_ATTEMPTS = 3
ANSWERS = {TraceKind.WHATIF.value: answer_whatif, TraceKind.DIFF.value: answer_diff}  # else a trace
STOPPED_TOO_OFTEN = ("the worker running this trace stopped {attempts} times (killed, or out of memory?); see the "
                     "workers' logs, then re-run it")


def run_trace(trace_pk: int, *, worker: str = "", spark: Callable[[], Any] | None = None) -> Trace | None:
    """Runs a queued trace to its end (succeeded, failed or cancelled); None if it was not queued.

    Args:
        trace_pk: the trace.
        worker: the Celery worker's name, kept on the trace (a restarted worker recovers its own).
        spark: gives the warm SparkContext (called at the first step that runs on Spark, if any).
    """
    trace = claim_queued(Trace.objects.all(), trace_pk, worker, refusal=_refusal, also=_count_attempt)
    if trace is None:
        return None
    watch = Watch(trace.pk)
    try:
        with watch:
            answer = ANSWERS.get(str(trace.kind), answer_trace)
            answer(trace, watch, spark)
    except TraceCancelled:
        log.info("trace %s: cancelled while running", trace.pk)
    except TraceFailure as exc:
        fail_running(Trace, trace.pk, str(exc))
    except Exception as exc:
        if watch.cancelled.is_set():  # a Spark job of the trace's group, cancelled by the watcher
            log.info("trace %s: cancelled while running (%s)", trace.pk, type(exc).__name__)
        else:
            log.exception("trace %s failed", trace.pk)
            fail_running(Trace, trace.pk,
                         f"internal error ({type(exc).__name__}: {exc}); the worker's log has the details")
    return Trace.objects.get(pk=trace.pk)


def _refusal(trace: Trace) -> str | None:
    """A trace whose workers stopped ``MAX_ATTEMPTS`` times fails instead of running again."""
    return STOPPED_TOO_OFTEN.format(attempts=trace.attempts) if trace.attempts >= MAX_ATTEMPTS else None


def _count_attempt(trace: Trace, now: dt.datetime) -> list[str]:
    trace.attempts += 1
    trace.heartbeat_at = now
    trace.error = ""
    return ["attempts", "heartbeat_at", "error"]
