"""A trace's records (``capture_agent.record.query.results``): a page of them, or all of them for a download."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from capture_agent.record.query.results import iter_records, read_page
from lineage_server.tracing.selectors.results import ResultFile


def trace_records_page(result: ResultFile, start: int, size: int,
                       capture_id: str | None = None) -> tuple[int, list[dict[str, Any]]]:
    """(records in all, records ``start`` to ``start + size``), of one capture point (the run's id) when given."""
    return read_page(result.store, result.path, start, size, capture_id)


def trace_records(result: ResultFile) -> Iterator[dict[str, Any]]:
    """Every record of a trace's result, in order (any size, bounded memory)."""
    return iter_records(result.store, result.path)
