"""``capture_point`` ingest events (docs/ingest-events.md) and their delivery.

Events go through the coarse capture agent's sink when an agent runs for the same SparkContext;
otherwise ``LineageContext.capture_point_events()`` returns them for the caller to send.
Delivery never raises.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from capture_agent.protocol import CAPTURE_POINT, event_id
from capture_agent.record.storage.manifest import CapturePoint, LineageStore

log = logging.getLogger("capture_agent")

MAX_FILES = 1000  # an input's files named in its event (docs/ingest-events.md); the run folder has all


def _event_id(run_id: str, point: CapturePoint) -> str:
    # a point re-sent with other counts, or with tables found missing, is a new event
    missing = [f"missing{len(point.missing)}"] if point.missing else []
    return event_id(CAPTURE_POINT, run_id, point.capture_id, point.rows, point.bytes, *missing)


def capture_point_event(app_id: str, store: LineageStore, point: CapturePoint) -> dict[str, Any]:
    """The ``capture_point`` event of one point (capture ids are prefixed with the run id, which
    keeps them unique when one application runs several LineageContexts)."""
    run_id = store.run_id
    event: dict[str, Any] = {
        "event_id": _event_id(run_id, point),
        "type": CAPTURE_POINT,
        "app_id": app_id,
        "time": int(time.time() * 1000),
        "capture_id": f"{run_id}/{point.capture_id}",
        "kind": point.kind,
        "location": store.fs.uri(point.location),
        "rows": int(point.rows),
        "bytes": int(point.bytes),
        "parents": [f"{run_id}/{p}" for p in point.parents],
    }
    if point.rdd_id is not None:
        event["rdd_id"] = int(point.rdd_id)
    if point.stage_id is not None:
        event["stage_id"] = int(point.stage_id)
    files = point.layout.files_read()
    if files:
        event["files"] = files[:MAX_FILES]
    if point.missing:
        event["missing"] = [{"partition": part, "reason": reason} for part, reason in sorted(point.missing.items())]
    if point.column_lineage:
        event["column_lineage"] = point.column_lineage
    return event


def capture_point_events(app_id: str, store: LineageStore, points: list[CapturePoint]) -> list[dict[str, Any]]:
    return [capture_point_event(app_id, store, p) for p in points]


def not_captured_event(app_id: str, store: LineageStore, entry: dict[str, str]) -> dict[str, Any]:
    """The ``capture_point`` event of an action that ran plain (``LineageStore.add_not_captured``): an
    output with no table, whose ``not_captured`` says why, so the server refuses traces from it."""
    run_id = store.run_id
    capture_id = entry["capture_id"]
    return {
        "event_id": event_id(CAPTURE_POINT, run_id, capture_id, 0, 0, "not_captured"),
        "type": CAPTURE_POINT,
        "app_id": app_id,
        "time": int(time.time() * 1000),
        "capture_id": f"{run_id}/{capture_id}",
        "kind": "output",
        "location": store.fs.uri(store.run_dir),
        "rows": 0,
        "bytes": 0,
        "parents": [],
        # the server's limit (docs/ingest-events.md); a longer reason is cut, never refused
        "not_captured": f"DataFrame.{entry['action']} ran plain: {entry['reason']}"[:2000],
    }


def not_captured_events(app_id: str, store: LineageStore) -> list[dict[str, Any]]:
    """Events of every action of the run that ran plain (entries of old manifests without an id left out)."""
    return [not_captured_event(app_id, store, e) for e in store.not_captured if e.get("capture_id")]


def deliver(sc: Any, events: list[dict[str, Any]]) -> bool:
    """Hands events to the running coarse agent of this SparkContext; False when there is none."""
    if not events:
        return False
    try:
        from capture_agent.agent import current_agent

        agent = current_agent()
        if agent is None or not agent.running or agent.sc is not sc:
            return False
        agent.emit(events)
        return True
    except Exception as exc:  # noqa: BLE001 - lineage must never fail the job
        log.warning("lineage: capture point events not delivered: %s", exc)
        return False
