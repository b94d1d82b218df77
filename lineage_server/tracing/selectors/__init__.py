"""Reads of traces: the history (every read starts from the caller's teams) and a finished
trace's result file, a page at a time or whole for a download, one module per kind of result."""

from lineage_server.tracing.selectors.diff_rows import diff_rows, diff_rows_page
from lineage_server.tracing.selectors.history import trace_history, visible_traces
from lineage_server.tracing.selectors.results import ResultFile, ResultGone, ResultNotReady, result_file
from lineage_server.tracing.selectors.trace_records import trace_records, trace_records_page
from lineage_server.tracing.selectors.traced_columns import traced_columns
from lineage_server.tracing.selectors.whatif_records import FATES, whatif_records, whatif_records_page

__all__ = [
    "FATES",
    "ResultFile",
    "ResultGone",
    "ResultNotReady",
    "diff_rows",
    "diff_rows_page",
    "result_file",
    "trace_history",
    "trace_records",
    "trace_records_page",
    "traced_columns",
    "visible_traces",
    "whatif_records",
    "whatif_records_page",
]
