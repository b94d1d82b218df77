"""capture_agent.protocol: one event id rule, and the limits the schema and the agent share."""

from __future__ import annotations

import pytest

from capture_agent import protocol
from capture_agent.protocol import MAX_EVENT_ID, event_id
from tests.ingest_schema import SCHEMA


def test_an_event_id_is_its_type_and_parts() -> None:
    assert event_id("application_start") == "application_start"
    assert event_id("stage_completed", 3, 0) == "stage_completed:3:0"
    assert event_id("dataset_io", "read", "job4", "file:/a") == "dataset_io:read:job4:file:/a"


def test_a_long_event_id_is_its_type_and_the_hash_of_the_whole_id() -> None:
    short = event_id("capture_point", "r" * 50, "c" * 50, 10, 20)
    assert short == f"capture_point:{'r' * 50}:{'c' * 50}:10:20" and len(short) <= MAX_EVENT_ID
    long_id = event_id("capture_point", "r" * 120, "c", 10, 20)
    assert long_id.startswith("capture_point:sha256:") and len(long_id) == len("capture_point:sha256:") + 64
    assert long_id != event_id("capture_point", "r" * 120, "c", 10, 21)
    assert all(len(event_id(kind, "p" * 500)) <= MAX_EVENT_ID for kind in protocol.EVENT_TYPES)


def test_an_unknown_event_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown event type 'job'"):
        event_id("job", 1)


def test_the_schema_has_the_protocols_types_and_limits() -> None:
    event = SCHEMA["$defs"]["event"]
    assert event["properties"]["type"]["enum"] == list(protocol.EVENT_TYPES)
    assert event["properties"]["event_id"]["maxLength"] == protocol.MAX_EVENT_ID
    assert SCHEMA["properties"]["events"]["maxItems"] == protocol.MAX_BATCH_EVENTS
    assert SCHEMA["$defs"]["dataset_io"]["properties"]["path"]["maxLength"] == protocol.MAX_PATH
    assert SCHEMA["$defs"]["job_start"]["properties"]["description"]["maxLength"] == protocol.MAX_TEXT
    assert SCHEMA["$defs"]["job_end"]["properties"]["error"]["maxLength"] == protocol.MAX_LONG_TEXT
