"""docs/ingest-events.schema.json and the server's ingest endpoint agree, so neither drifts silently.

Every fixture event the server tests post fits the schema; bodies the schema accepts are a 200 and
bodies it rejects a 400. Where the server is knowingly more lenient than the schema, the cases are
pinned below, so a change on either side shows up here.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_server.api.serializers.ingest import EVENT_TYPES, STATUS_CHOICES
from lineage_server.catalog.metrics import METRIC_NAMES
from lineage_server.catalog.models import CaptureKind, IODirection
from tests.ingest_schema import SCHEMA, assert_valid_events, body_errors
from tests.lineage_server.events import event, operator, stage_run, word_count_with_join

pytestmark = pytest.mark.django_db

Body = dict[str, Any]
MAX_TIME_MS = SCHEMA["$defs"]["event"]["properties"]["time"]["maximum"]  # 9999-12-31T23:59:59.999Z


def capture_point(**fields: Any) -> dict[str, Any]:
    base = {"capture_id": "run1/p0", "kind": "reducer", "location": "var/lineage/local-1/p0", "rows": 3,
            "bytes": 120, "parents": ["run1/p1"], "stage_id": 1, "rdd_id": 4}
    return event("capture_point", event_id="capture_point:run1:p0", **{**base, **fields})


def fixture_events() -> list[dict[str, Any]]:
    """The events the server's tests post, from tests/lineage_server/events.py."""
    submitted, completed = stage_run("local-3", 1, 2, operators=[operator(0, "x", [], "textFile", cached=True)],
                                     metrics={"tasks": 1}, stage_id=0, job_id=0, parent_stage_ids=[])
    return [
        *word_count_with_join("local-1"),
        *word_count_with_join("app-20251121132000-0007"),
        submitted,
        completed,
        event("stage_completed", "local-2", 5, stage_id=3, attempt=0, job_id=1, status="failed",
              failure_reason="lost", parent_stage_ids=[], name="count at x.py:1"),
        event("job_end", "local-2", 9, job_id=1, status="failed", error="boom"),
        capture_point(),
    ]


def test_every_fixture_event_fits_the_schema() -> None:
    assert_valid_events(fixture_events())


def test_the_schema_names_what_the_serializer_does() -> None:
    defs = SCHEMA["$defs"]
    assert set(defs["event"]["properties"]["type"]["enum"]) == set(EVENT_TYPES)
    assert set(defs["metrics"]["properties"]) == set(METRIC_NAMES)
    assert set(defs["capture_point"]["properties"]["kind"]["enum"]) == set(CaptureKind.values)
    assert set(defs["dataset_io"]["properties"]["direction"]["enum"]) == set(IODirection.values)
    assert set(defs["status"]["enum"]) == set(STATUS_CHOICES)
    for name, serializer in EVENT_TYPES.items():
        assert set(defs[name]["properties"]) >= set(serializer().fields), name


def test_the_schema_limits_are_the_servers_defaults() -> None:
    from lineage_server.env import SETTINGS

    assert SCHEMA["properties"]["events"]["maxItems"] == int(SETTINGS["LINEAGE_INGEST_MAX_EVENTS"].default)


DROP = object()


def one(**changes: Any) -> Callable[[], Body]:
    """A body of one job_start event with ``changes`` applied (``DROP`` removes the field)."""

    def build() -> Body:
        job = event("job_start", job_id=1, stage_ids=[0], description="d", call_site="c", job_group="g")
        for key, value in changes.items():
            if value is DROP:
                job.pop(key)
            else:
                job[key] = value
        return {"events": [job]}

    return build


def of(make: Callable[..., dict[str, Any]], *args: Any, **fields: Any) -> Callable[[], Body]:
    return lambda: {"events": [make(*args, **fields)]}


REJECTED_BY_BOTH: dict[str, Callable[[], Body]] = {
    "no events": lambda: {"events": []},
    "no body": lambda: {},
    "more than 500 events": lambda: {"events": [event("job_start", job_id=i) for i in range(501)]},
    "no event_id": one(event_id=DROP),
    "event_id of 129 characters": one(event_id="j" * 129),
    "blank event_id": one(event_id="   "),
    "unknown type": one(type="teleport"),
    "app_id with a slash": one(app_id="a b/c"),
    "negative time": one(time=-1),
    "time past 2**62": one(time=2**62 + 1),
    "no job_id": one(job_id=DROP),
    "job_id past 2**62": one(job_id=2**70),
    "job_id past a Java int": one(job_id=2**31),
    "null description": one(description=None),
    "description with a NUL character": one(description="a\x00b"),
    "stage ids not a list": one(stage_ids=3),
    "job_group of 257 characters": one(job_group="g" * 257),
    "job_end with an unknown status": of(event, "job_end", job_id=1, status="maybe"),
    "stage_completed without a status": of(event, "stage_completed", stage_id=1),
    "negative metric": of(event, "stage_completed", stage_id=1, status="succeeded", metrics={"tasks": -3}),
    "operator without an rdd_id": of(event, "stage_submitted", stage_id=1, operators=[{"name": "x"}]),
    "operator cached neither true nor false": of(event, "stage_submitted", stage_id=1,
                                                 operators=[operator(1, "x", [], cached="maybe")]),
    "application_start without a name": of(event, "application_start"),
    "application name of 513 characters": of(event, "application_start", name="n" * 513),
    "dataset path empty": of(event, "dataset_io", path="", direction="read"),
    "dataset direction sideways": of(event, "dataset_io", path="/p", direction="sideways"),
    "dataset format of 65 characters": of(event, "dataset_io", path="/p", direction="read", format="f" * 65),
    "python_operators without operators": of(event, "python_operators", rdd_id=1),
    "python operator without a name": of(event, "python_operators", rdd_id=1, operators=[{"call_site": "a:1"}]),
    "capture point of an unknown kind": of(capture_point, kind="sideways"),
    "capture point without a location": lambda: {"events": [{k: v for k, v in capture_point().items()
                                                              if k != "location"}]},
    "capture point with a blank parent": of(capture_point, parents=[""]),
    "capture point with negative rows": of(capture_point, rows=-1),
    "missing partition below 0": of(capture_point, missing=[{"partition": -1, "reason": "x"}]),
    "missing reason of 1001 characters": of(capture_point, missing=[{"partition": 0, "reason": "r" * 1001}]),
    "not_captured of 2001 characters": of(capture_point, kind="output", not_captured="r" * 2001),
    "null not_captured": of(capture_point, kind="output", not_captured=None),
    "time past year 9999": one(time=MAX_TIME_MS + 1),
}

ACCEPTED_BY_BOTH: dict[str, Callable[[], Body]] = {
    "the fixture events": lambda: {"events": fixture_events()},
    "500 events": lambda: {"events": [event("job_start", job_id=i) for i in range(500)]},
    "event_id of 128 characters and the largest ids": one(event_id="j" * 128, job_id=2**31 - 1, time=0),
    "nullable fields null": lambda: {"events": [
        event("application_start", name="a", attempt_id=None),
        event("job_start", job_id=1, sql_execution_id=None, job_group=None),
        event("job_end", job_id=1, status="failed", error=None),
        event("stage_completed", stage_id=1, status="failed", failure_reason=None, job_id=None),
        event("dataset_io", path="/p", direction="written", size_bytes=None, job_id=None, rdd_id=None,
              sql_execution_id=None),
        capture_point(stage_id=None, rdd_id=None),
    ]},
    "blank texts": lambda: {"events": [
        event("application_start", name="", user="", master="", spark_conf={"k": ""}),
        event("job_start", job_id=2, description="", call_site=""),
    ]},
    "only the required fields": lambda: {"events": [
        event("application_end"),
        event("job_start", job_id=3),
        event("stage_submitted", stage_id=2),
        event("python_operators", rdd_id=1, operators=[]),
        event("capture_point", capture_id="c", kind="input", location="l"),
    ]},
    "capture point with missing partitions": of(capture_point, missing=[
        {"partition": 0, "reason": "executor lost"}, {"partition": 3, "reason": "r" * 1000}]),
    "not-captured output": of(capture_point, kind="output", rows=0, bytes=0, parents=[], not_captured="r" * 2000),
}

# Bodies the schema refuses but today's server takes (it ignores unknown fields, coerces numbers
# and text). Agents must not send them; when the server grows stricter, move a case to
# REJECTED_BY_BOTH.
SERVER_MORE_LENIENT: dict[str, Callable[[], Body]] = {
    "unknown field": one(colour="blue"),
    "integer as a string": one(job_id="5"),
    "text as a number": one(description=5),
    "unknown top-level key": lambda: {"events": [event("job_start", job_id=1)], "extra": 1},
}


@pytest.fixture
def post_body(api_client: Any, agent_token: str) -> Callable[[Body], Any]:
    def post(body: Body) -> Any:
        return api_client.post("/api/v1/ingest/events/", body, format="json",
                               HTTP_AUTHORIZATION=f"Bearer {agent_token}")

    return post


@pytest.mark.parametrize("case", sorted(REJECTED_BY_BOTH))
def test_what_the_schema_rejects_the_server_rejects(case: str, post_body: Callable[[Body], Any]) -> None:
    body = REJECTED_BY_BOTH[case]()
    assert body_errors(body), f"the schema accepts {case}"
    response = post_body(body)
    assert response.status_code == 400, (case, response.content[:300])


@pytest.mark.parametrize("case", sorted(ACCEPTED_BY_BOTH))
def test_what_the_schema_accepts_the_server_accepts(case: str, post_body: Callable[[Body], Any]) -> None:
    body = ACCEPTED_BY_BOTH[case]()
    assert body_errors(body) == []
    response = post_body(body)
    assert response.status_code == 200, (case, response.content[:300])


@pytest.mark.parametrize("case", sorted(SERVER_MORE_LENIENT))
def test_where_the_server_is_knowingly_more_lenient(case: str, post_body: Callable[[Body], Any]) -> None:
    body = SERVER_MORE_LENIENT[case]()
    assert body_errors(body), f"the schema accepts {case}"
    assert post_body(body).status_code == 200, case


_values = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([2**62, 2**63, 1.5]) | st.text(max_size=3) \
    | st.lists(st.integers(-1, 2), max_size=2) | st.dictionaries(st.sampled_from(["name", "rdd_id", "tasks"]),
                                                                 st.integers(-1, 2), max_size=2)
_fields = sorted({name for d in SCHEMA["$defs"].values() for name in d.get("properties", {})})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(index=st.integers(0, len(fixture_events()) - 1), field=st.sampled_from(_fields), value=_values,
       drop=st.booleans())
def test_a_mutated_fixture_event_the_schema_accepts_is_accepted(
    post_body: Callable[[Body], Any], index: int, field: str, value: Any, drop: bool
) -> None:
    mutated = copy.deepcopy(fixture_events()[index])
    mutated["event_id"] = f"mutated:{index}:{field}"
    if drop:
        mutated.pop(field, None)
    else:
        mutated[field] = value
    body = {"events": [mutated]}
    status = post_body(body).status_code
    if not body_errors(body):
        assert status == 200, body
    else:
        assert status in (200, 400), body
