"""Writes on traces, each a verb function inside a transaction; ``run_trace`` is the worker's."""

from lineage_server.tracing.services.ask import RUN_TRACE_TASK, ask_trace, ask_whatif, rerun_trace
from lineage_server.tracing.services.diff_ask import ask_diff, previous_run
from lineage_server.tracing.services.fair import run_next_trace
from lineage_server.tracing.services.history import TraceStateError, cancel_trace, delete_trace, update_trace
from lineage_server.tracing.services.questions import TraceQuestionError
from lineage_server.tracing.services.recovery import recover_traces
from lineage_server.tracing.services.run import run_trace

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
