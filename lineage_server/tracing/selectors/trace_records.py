"""A trace's records (``capture_agent.record.query.results``): a page of them, or all of them for a
download, with the values the result file leaves for later read then (``trace_values``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from capture_agent.record.query.results import iter_records, read_page
from lineage_server.tracing.models import Trace
from lineage_server.tracing.selectors.results import ResultFile
from lineage_server.tracing.selectors.trace_values import check_values, trace_values


def trace_records_page(trace: Trace, result: ResultFile, start: int, size: int,
                       capture_id: str | None = None) -> tuple[int, list[dict[str, Any]]]:
    """(records in all, records ``start`` to ``start + size``), of one capture point (the run's id)
    when given; the values of that page's records alone are read from their sources.

    Raises:
        ResultGone: their values cannot be read now (``trace_values``).
    """
    return read_page(result.store, result.path, start, size, capture_id, trace_values(trace, result))


def trace_records(trace: Trace, result: ResultFile) -> Iterator[dict[str, Any]]:
    """Every record of a trace's result, in order (any size, bounded memory), values read a row
    group at a time.

    Raises:
        ResultGone: at once, when values it leaves for later cannot be read now (``check_values``).
    """
    check_values(trace, result)
    return iter_records(result.store, result.path, trace_values(trace, result))
