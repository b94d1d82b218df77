"""What the capture agents (coarse and record-level) share with the lineage server: ingest protocol v1.

docs/ingest-events.md describes the protocol in prose and docs/ingest-events.schema.json as a JSON
Schema; the server's serializer (lineage_server/api/serializers/ingest.py) is the authority on what
it accepts, and tests keep the three in step. This module only names things: it imports nothing of
the agent, so every other module may import it.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

Event = dict[str, Any]

INGEST_PATH: Final = "/api/v1/ingest/events/"

# Limits of one request and of its fields (the server's defaults; it answers 400/413 above them).
MAX_EVENT_ID: Final = 128
MAX_BATCH_EVENTS: Final = 500
MAX_BODY_BYTES: Final = 5 * 1024 * 1024
MAX_TEXT: Final = 4096
MAX_LONG_TEXT: Final = 65536
MAX_PATH: Final = 2048

# Event types, one per kind of fact an agent reports.
APPLICATION_START: Final = "application_start"
APPLICATION_END: Final = "application_end"
JOB_START: Final = "job_start"
JOB_END: Final = "job_end"
STAGE_SUBMITTED: Final = "stage_submitted"
STAGE_COMPLETED: Final = "stage_completed"
DATASET_IO: Final = "dataset_io"
PYTHON_OPERATORS: Final = "python_operators"
CAPTURE_POINT: Final = "capture_point"
EVENT_TYPES: Final = (
    APPLICATION_START,
    APPLICATION_END,
    JOB_START,
    JOB_END,
    STAGE_SUBMITTED,
    STAGE_COMPLETED,
    DATASET_IO,
    PYTHON_OPERATORS,
    CAPTURE_POINT,
)

# Spark local properties an agent sets around an RDD save so that the job-start event names the
# dataset it writes (the listener reads them from the job's properties).
OUTPUT_PATH_PROPERTY: Final = "lineage.output.path"
OUTPUT_FORMAT_PROPERTY: Final = "lineage.output.format"

_HASH_MARK = "sha256:"


def event_id(kind: str, *parts: object) -> str:
    """The ``event_id`` of an event: its type and the parts that identify it, joined by ``:``.

    The id is derived from the event alone, so a retry or a re-delivery carries the same id and
    the server counts it as a duplicate. An id longer than ``MAX_EVENT_ID`` becomes
    ``<kind>:sha256:<64 hex digits>``, the hash of the whole long id.

    Args:
        kind: the event type, one of ``EVENT_TYPES``.
        *parts: what tells this event from the others of its type (ids, a path...), in order;
            each is written with ``str()``.

    Returns:
        An id of 1..``MAX_EVENT_ID`` characters, e.g. ``event_id("stage_completed", 3, 0)`` is
        ``"stage_completed:3:0"``.

    Raises:
        ValueError: ``kind`` is not an event type.
    """
    if kind not in EVENT_TYPES:
        raise ValueError(f"unknown event type {kind!r} (known: {', '.join(EVENT_TYPES)})")
    full = ":".join([kind, *map(str, parts)])
    if len(full) <= MAX_EVENT_ID:
        return full
    return f"{kind}:{_HASH_MARK}{hashlib.sha256(full.encode('utf-8')).hexdigest()}"
