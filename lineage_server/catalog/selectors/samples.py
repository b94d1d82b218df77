"""Sample records of a capture point for the browser's node panel, read from the lineage store by
the web process (``capture_agent.record.query.samples``: text kept at capture, input lines and
Parquet rows; nothing unpickled, no job code run).

Only run folders inside the configured store (``LINEAGE["STORE"]``) whose manifest names the
point's application are read, as deletion only touches those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from capture_agent.record.errors import LineageError
from capture_agent.record.query import samples
from capture_agent.record.query.samples import MAX_SAMPLE
from capture_agent.record.storage.manifest import LineageStore
from lineage_server.catalog import store_files
from lineage_server.catalog.models import CapturePoint


@dataclass
class PointSample:
    capture_id: str
    kept: bool
    records: list[dict[str, object]] = field(default_factory=list)
    note: str = ""


def point_sample(point: CapturePoint, limit: int) -> PointSample:
    """Up to ``limit`` records of ``point`` as text, or why none can be shown."""
    app_id = point.application.app_id
    run_id, _, local_id = point.capture_id.rpartition("/")
    try:
        run = open_run(point.location, app_id)
    except (OSError, ValueError, LineageError) as exc:
        return PointSample(point.capture_id, False, note=f"its run folder cannot be read ({type(exc).__name__}: {exc})")
    if run is None:
        return PointSample(point.capture_id, False,
                           note="its tables are not in this server's lineage store (LINEAGE_STORE)")
    if run_id and run.run_id and run.run_id != run_id or local_id not in run.points:
        return PointSample(point.capture_id, False, note="its run folder now holds another run")
    found = samples.sample(run, local_id, limit)
    return PointSample(point.capture_id, found.kept,
                       [{"record_id": record_id, "text": text} for record_id, text in found.records], found.note)


def open_run(location: str, app_id: str) -> LineageStore | None:
    """The run folder holding ``location`` (a capture point's), if it is in the configured store and
    its manifest names ``app_id``; else None."""
    store = settings.LINEAGE["STORE"]
    root = store_files.local_root(store)
    if root is not None:
        path = store_files.inside_root(root, location)
        folder: Path | None = None if path is None else store_files.run_folder_of(root, path, app_id)
        return None if folder is None else LineageStore.open(str(folder))
    shared = store_files.remote_store(store)
    assert shared is not None
    remote = store_files.remote_inside(shared, location)
    remote_folder = None if remote is None else store_files.remote_run_folder(shared, remote, app_id)
    return None if remote_folder is None else LineageStore.open(str(remote_folder), shared)


__all__ = ["MAX_SAMPLE", "PointSample", "open_run", "point_sample"]
