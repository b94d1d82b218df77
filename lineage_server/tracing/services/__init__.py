"""Writes on traces, each a verb function inside a transaction; ``run_trace`` is the worker's.

A trace's life, module by module: ``asking`` (a trace or what-if: the stored answer, or a queued
row) and ``diff_asking`` (a diff of two runs), both checked by ``questions``; ``fair_queue``
(which queued row a worker takes next); ``dispatch`` (claims the row and hands it to its kind's
answer: ``trace_answer``, ``whatif_answer``, ``diff_answer``, which share ``opened_run`` and
``failures``), watched by ``watch``; ``recovery`` (rows a worker or the broker lost);
``history`` (naming, pinning, cancelling and deleting).
"""

from lineage_server.tracing.services.asking import RUN_TRACE_TASK, ask_trace, ask_whatif, rerun_trace
from lineage_server.tracing.services.diff_asking import ask_diff, previous_run
from lineage_server.tracing.services.dispatch import run_trace
from lineage_server.tracing.services.fair_queue import run_next_trace
from lineage_server.tracing.services.history import TraceStateError, cancel_trace, delete_trace, update_trace
from lineage_server.tracing.services.questions import TraceQuestionError
from lineage_server.tracing.services.recovery import recover_traces

__all__ = [
    "RUN_TRACE_TASK",
    "TraceQuestionError",
    "TraceStateError",
    "ask_trace",
    "ask_diff",
    "ask_whatif",
    "cancel_trace",
    "delete_trace",
    "previous_run",
    "recover_traces",
    "rerun_trace",
    "run_next_trace",
    "run_trace",
    "update_trace",
]
