"""A finished trace's result file in the lineage store, opened for its pages and downloads."""

from __future__ import annotations

from dataclasses import dataclass

from capture_agent.record.storage.fs import StoreFS
from lineage_server.tracing.models import Trace, TraceStatus


class ResultNotReady(Exception):
    """The trace has not succeeded (yet): there is no result to read."""


class ResultGone(Exception):
    """The trace's result file is no longer in the lineage store, or cannot be opened."""


@dataclass(frozen=True)
class ResultFile:
    """A result file: the store that holds it and its path there."""

    store: StoreFS
    path: str


def result_file(trace: Trace) -> ResultFile:
    """The result file of a succeeded trace, what-if or diff.

    Raises:
        ResultNotReady: the trace has not succeeded.
        ResultGone: its file was deleted or moved since, or its location cannot be opened.
    """
    if trace.status != TraceStatus.SUCCEEDED:
        raise ResultNotReady(f"{trace.kind} {trace.pk} is {trace.status}: its records exist once it has succeeded")
    try:
        store = StoreFS.resolve(trace.result_location)
    except ValueError as exc:
        raise ResultGone(f"the result {trace.result_location} cannot be opened: {exc}") from None
    if not store.exists(store.root):
        raise ResultGone(f"the result file {trace.result_location} is no longer in the lineage store; re-run the "
                         f"{trace.kind}")
    return ResultFile(store, store.root)
