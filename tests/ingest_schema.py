"""docs/ingest-events.schema.json, loaded once, for the agent's and the server's tests alike."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "docs" / "ingest-events.schema.json"
SCHEMA: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
Draft202012Validator.check_schema(SCHEMA)
VALIDATOR = Draft202012Validator(SCHEMA)


def body_errors(body: Any) -> list[str]:
    """What the schema finds wrong with a request body (empty when it is valid)."""
    return [f"{'/'.join(map(str, e.absolute_path)) or '(body)'}: {e.message}" for e in VALIDATOR.iter_errors(body)]


def assert_valid_events(events: Iterable[dict[str, Any]]) -> None:
    """Fails naming each event the schema rejects, and why (batches of the server's maximum size)."""
    events = list(events)
    for start in range(0, len(events), 500):
        errors = body_errors({"events": events[start : start + 500]})
        assert not errors, "events the ingest schema rejects:\n" + "\n".join(errors[:20])
