"""A what-if's records, each with its fate (``capture_agent.record.query.whatif_results``): a page
of them by capture point and fate, or all of them for a download."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from capture_agent.record.query.whatif_results import FATES, iter_whatif, read_whatif_page
from lineage_server.tracing.selectors.results import ResultFile

__all__ = ["FATES", "whatif_records", "whatif_records_page"]


def whatif_records_page(result: ResultFile, start: int, size: int, capture_id: str | None = None,
                        fate: str | None = None) -> tuple[int, list[dict[str, Any]]]:
    """(records matching, matching records ``start`` to ``start + size``), of one capture point (the
    run's id) and one of ``FATES`` when given."""
    return read_whatif_page(result.store, result.path, start, size, capture_id, fate)


def whatif_records(result: ResultFile) -> Iterator[dict[str, Any]]:
    """Every record of a what-if's result with its fate, in order."""
    return iter_whatif(result.store, result.path)
