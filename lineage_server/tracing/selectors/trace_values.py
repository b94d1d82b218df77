"""The values of a trace's records, read by the web process when a page of them (or a download)
is read: a trace is done once the ids and places of the records it reached are known, and its
result file holds values only for its first page (``capture_agent.record.query.results``).

Only values read from the files the job read are left for later (``Layout.source_values``: text
lines, CSV and JSON lines, Parquet and ORC rows; nothing unpickled, no job code run, as the trust
model in docs/security.md wants of the web process); the worker reads them the same way. The run
is opened from the folder that holds the result file (``<run folder>/traces/``), once per process
for a few runs at a time.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.errors import LineageError
from capture_agent.record.query.results import ValueFetcher, result_points, session_values
from capture_agent.record.query.session import TraceSession
from capture_agent.record.storage.chains import link_runs
from capture_agent.record.storage.layouts.inputs import check_files
from capture_agent.record.storage.manifest import LineageStore
from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.models import Trace
from lineage_server.tracing.selectors.results import ResultFile, ResultGone

KEPT_RUNS = 8  # opened runs kept per process (a page of a trace read after another opens no manifest)
_opened: OrderedDict[tuple[str, bool], TraceSession] = OrderedDict()
_lock = threading.Lock()


def run_id_of(capture_id: str) -> str:
    """The run id a server capture id begins with ("<run id>/<capture id>"); "" when it has none."""
    return capture_id.split("/", 1)[0] if "/" in capture_id else ""


def team_runs(team_id: int) -> set[str]:
    """Run ids (the first part of capture point ids) of the applications of a team."""
    ids = CapturePoint.objects.filter(application__team_id=team_id).values_list("capture_id", flat=True)
    return {run_id_of(cid) for cid in ids.iterator()}


def run_folder(result: ResultFile) -> str:
    """The run folder a trace's result file was written in (``<run folder>/traces/<file>``)."""
    return result.store.uri(result.path).rsplit("/", 2)[0]


def _session(folder: str, chained: bool, team_id: int) -> TraceSession:
    key = (folder, chained)
    with _lock:
        if key in _opened:
            _opened.move_to_end(key)
            return _opened[key]
    lineage = LineageStore.open(folder)
    if chained:  # points of the runs chained to this one, named "<run id>/<capture id>"
        link_runs(lineage, team_runs(team_id).__contains__)
    session = TraceSession(lineage, None, "local")
    with _lock:
        _opened[key] = session
        while len(_opened) > KEPT_RUNS:
            _opened.popitem(last=False)
    return session


def trace_values(trace: Trace, result: ResultFile) -> ValueFetcher:
    """Reads the values of ``trace``'s records that its result file leaves for later, a page or a
    row group at a time (the run opened at the first call).

    The fetcher raises ResultGone when the run folder or a source file cannot be read, or a
    source file changed since capture (the ids and places stay listed; the values cannot be
    shown from it)."""
    opened: dict[bool, TraceSession] = {}

    def fetch(cid: str, ids: BitMap64) -> dict[int, Any]:
        chained = "/" in cid
        try:
            if chained not in opened:
                opened[chained] = _session(run_folder(result), chained, trace.application.team_id)
            return session_values(opened[chained])(cid, ids)
        except (OSError, ValueError, KeyError, LineageError) as exc:
            raise ResultGone(f"the values of {trace.kind} {trace.pk}'s records at {cid} are read from the run's "
                             f"sources when shown, and cannot be now: {exc}") from None

    return fetch


def check_values(trace: Trace, result: ResultFile) -> None:
    """Raises ResultGone when values the result leaves for later cannot be read now (the run folder
    is gone, or a source file of a point the result holds changed since capture): a download checks
    before it starts streaming."""
    try:
        points = [cid for cid, later in result_points(result.store, result.path).items() if later]
        if not points:
            return
        chained = any("/" in cid for cid in points)
        session = _session(run_folder(result), chained, trace.application.team_id)
        for cid in points:
            check_files(getattr(session.store.point(cid).layout, "files", None) or [])
    except (OSError, ValueError, KeyError, LineageError) as exc:
        raise ResultGone(f"the values of {trace.kind} {trace.pk}'s records are read from the run's sources when "
                         f"shown, and cannot be now: {exc}") from None


__all__ = ["check_values", "run_folder", "run_id_of", "team_runs", "trace_values"]
