"""Validation of OpenLineage run events against the spec's JSON Schema files (``api/openlineage_spec/``),
with jsonschema-rs (a compiled validator: 10 µs an event, where the pure-Python jsonschema took 2 ms).

An event is checked against the spec's ``RunEvent`` and each facet it carries against that facet's
own schema file (by its key and where it sits: run, job, dataset, input or output facets); facets the
spec does not define need only its base facet fields. A valid event becomes an ingest event
(``docs/ingest-events.md``'s common fields) of type ``openlineage_run``, applied by the same batch
ingest as the agent's events: its ``event_id`` is a hash of the whole event, so an event sent again
is a duplicate, and its ``app_id`` names the run.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
from django.conf import settings
from rest_framework import serializers

from lineage_server.catalog.identities import openlineage_app_id
from lineage_server.catalog.services import OPENLINEAGE_EVENT_TYPE, EncodedBody

SPEC_DIR = Path(__file__).resolve().parents[1] / "openlineage_spec"
MAX_NAME = 1024  # characters of a job's or dataset's namespace or name (the catalog's columns)
# Where a facet sits in an event -> the spec's base definition of the facets allowed there.
_LOCATIONS = {"run": "RunFacet", "job": "JobFacet", "dataset": "DatasetFacet", "input": "InputDatasetFacet",
              "output": "OutputDatasetFacet"}


@functools.cache
def _validator() -> jsonschema_rs.Draft202012Validator:
    core = json.loads((SPEC_DIR / "OpenLineage.json").read_text())
    facet_files = [json.loads(path.read_text()) for path in sorted((SPEC_DIR / "facets").glob("*.json"))]
    registry = jsonschema_rs.Registry([(schema["$id"], schema) for schema in [core, *facet_files]])
    facets = {location: _facets_at(base, facet_files) for location, base in _LOCATIONS.items()}
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "allOf": [
            {"$ref": f"{core['$id']}#/$defs/RunEvent"},
            {"properties": {
                "run": {"properties": {"facets": facets["run"]}},
                "job": {"properties": {"facets": facets["job"]}},
                "inputs": {"items": {"properties": {"facets": facets["dataset"], "inputFacets": facets["input"]}}},
                "outputs": {"items": {"properties": {"facets": facets["dataset"], "outputFacets": facets["output"]}}},
            }},
        ],
    }
    # uuid and date-time are checked; uri is not: the integrations send bare names such as "file" where
    # the spec says uri (a dataSource facet's uri, some producers).
    return jsonschema_rs.Draft202012Validator(schema, registry=registry, validate_formats=True,
                                              formats={"uri": lambda value: True})


def _facets_at(base: str, facet_files: list[dict[str, Any]]) -> dict[str, Any]:
    """A schema for a facets object at one place: each facet the spec defines there checked by its file."""
    by_key: dict[str, list[Any]] = {}
    for schema in facet_files:
        for key, prop in schema.get("properties", {}).items():
            for ref in [prop.get("$ref")] + [option.get("$ref") for option in prop.get("anyOf", [])]:
                definition = schema["$defs"].get(str(ref).rsplit("/", 1)[-1], {})
                bases = [part.get("$ref", "") for part in definition.get("allOf", [])]
                if ref and any(b.endswith(f"#/$defs/{base}") for b in bases):
                    by_key.setdefault(key, []).append({"$ref": schema["$id"] + ref})
    properties: dict[str, Any] = {key: refs[0] if len(refs) == 1 else {"anyOf": refs} for key, refs in by_key.items()}
    return {"type": "object", "properties": properties}


def _field(error: jsonschema_rs.ValidationError) -> str:
    """The dotted path of the field an error is about (``inputs.0.namespace``)."""
    path = [str(part) for part in error.instance_path]
    if error.kind.name == "required":
        path.append(str(error.kind.as_dict()["property"]))
    return ".".join(path) or "(event)"


def _message(error: jsonschema_rs.ValidationError) -> str:
    return "This field is required." if error.kind.name == "required" else error.message


def event_errors(event: Any) -> dict[str, list[str]]:
    """What the OpenLineage schema (and this server's limits) find wrong with one event, by field."""
    if not isinstance(event, dict):
        return {"(event)": ["An OpenLineage event must be a JSON object."]}
    if "run" not in event:
        kind = "a dataset event" if "dataset" in event else "a job event" if "job" in event else "not a run event"
        return {"run": [f"This field is required: only OpenLineage run events are accepted, and this is {kind}."]}
    errors: dict[str, list[str]] = {}
    for error in _leaves(_validator().iter_errors(event)):
        messages = errors.setdefault(_field(error), [])
        if _message(error) not in messages:
            messages.append(_message(error))
    if errors:
        return errors
    for field, value in _names(event):
        if len(value) > MAX_NAME:
            errors.setdefault(field, []).append(f"Ensure this field has no more than {MAX_NAME} characters.")
    try:
        _event_time(event)
    except ValueError:
        errors["eventTime"] = ["Not an ISO 8601 date-time with a time zone."]
    return errors


def _leaves(errors: Iterator[jsonschema_rs.ValidationError]) -> Iterator[jsonschema_rs.ValidationError]:
    """The errors that name a field: one of an ``anyOf``/``oneOf`` is replaced by its branches' errors."""
    for error in errors:
        context = error.kind.as_dict().get("context")
        if context:
            for branch in context:
                yield from _leaves(iter(branch))
        else:
            yield error


def _names(event: dict[str, Any]) -> Iterator[tuple[str, str]]:
    yield "job.namespace", event["job"]["namespace"]
    yield "job.name", event["job"]["name"]
    for side in ("inputs", "outputs"):
        for n, dataset in enumerate(event.get(side) or []):
            yield f"{side}.{n}.namespace", dataset["namespace"]
            yield f"{side}.{n}.name", dataset["name"]


def _event_time(event: dict[str, Any]) -> dt.datetime:
    at = dt.datetime.fromisoformat(event["eventTime"])
    if at.tzinfo is None:
        raise ValueError("no time zone")
    return at


def as_ingest_event(event: dict[str, Any]) -> dict[str, Any]:
    """A valid OpenLineage run event as an ingest event: id from its content, application from its run (its
    body keeps that content's JSON text, which the batch stores)."""
    canonical = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    try:
        encoded = canonical.encode()
    except UnicodeEncodeError:
        encoded = b""
    if not encoded or "\\u0000" in canonical:
        raise serializers.ValidationError({_bad_text(event) or "(event)": [
            "text holding a NUL character or a lone surrogate (\\ud800-\\udfff), which is not storable text"]})
    return {
        "event_id": "openlineage:" + hashlib.sha256(encoded).hexdigest(),
        "type": OPENLINEAGE_EVENT_TYPE,
        "app_id": openlineage_app_id(event["run"]["runId"]),
        "time": int(_event_time(event).timestamp() * 1000),
        "body": EncodedBody(event, canonical),
    }


def _bad_text(value: Any, path: str = "") -> str | None:
    """The dotted path of the first key or string holding a NUL or a lone surrogate (None: none)."""
    if isinstance(value, str):
        return path if "\x00" in value or any("\ud800" <= c <= "\udfff" for c in value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        where = f"{path}.{key}" if path else str(key)
        if isinstance(key, str) and _bad_text(key) is not None:
            return where
        found = _bad_text(item, where)
        if found is not None:
            return found
    return None


class OpenLineageEventSerializer(serializers.Serializer):
    """One OpenLineage run event (the spec's RunEvent, facets checked by their schema files)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        errors = event_errors(data)
        if errors:
            raise serializers.ValidationError(errors)
        return as_ingest_event(data)

    def to_representation(self, instance: Any) -> Any:
        return instance


class OpenLineageBatchSerializer(serializers.ListSerializer):
    """A JSON array of OpenLineage run events (the spec's ``/lineage/batch``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("child", OpenLineageEventSerializer())
        kwargs.update(allow_empty=False, max_length=settings.LINEAGE["INGEST_MAX_EVENTS"])
        super().__init__(*args, **kwargs)
