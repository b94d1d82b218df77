"""The ingest endpoint: idempotent, order-independent, and strict about what it accepts."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineage_server.accounts.services import create_agent_token, create_team, revoke_token
from lineage_server.catalog.models import Application, Dataset, DatasetIO, IngestedEvent, Job, Operator, Stage
from tests.lineage_server.events import event, operator, word_count_with_join

pytestmark = pytest.mark.django_db


def _snapshot() -> dict[str, int]:
    return {
        model.__name__: model.objects.count()
        for model in (Application, Job, Stage, Operator, Dataset, DatasetIO, IngestedEvent)
    }


def test_a_batch_is_applied_and_counted(post_events):
    response = post_events(word_count_with_join())
    assert response.status_code == 200, response.content
    assert response.json() == {"accepted": 10, "duplicates": 0}
    app = Application.objects.get(app_id="local-1")
    assert (app.name, app.user, app.status) == ("wc", "ana", "succeeded")
    assert list(app.stages.values_list("stage_id", "status")) == [(0, "succeeded"), (1, "succeeded")]
    assert app.stages.get(stage_id=0).metrics["input_bytes"] == 1234
    assert Operator.objects.filter(stage__stage_id=1).count() == 2


def test_resending_events_changes_nothing(post_events):
    events = word_count_with_join()
    post_events(events)
    before = _snapshot()
    response = post_events(events)
    assert response.json() == {"accepted": 0, "duplicates": 10}
    assert _snapshot() == before


def test_events_in_any_order_give_the_same_catalog(post_events):
    in_order = word_count_with_join("local-in-order")
    shuffled = word_count_with_join("local-shuffled")
    random.Random(7).shuffle(shuffled)
    post_events(in_order)
    for one in shuffled:  # one request each, so a stage truly arrives before its job
        assert post_events([one]).status_code == 200

    def shape(app_id: str) -> tuple:
        app = Application.objects.get(app_id=app_id)
        jobs = list(app.jobs.values_list("job_id", "status", "call_site"))
        stages = list(app.stages.values_list("stage_id", "status", "name", "parent_stage_ids", "metrics"))
        ops = list(
            app.operators.values_list("stage__stage_id", "rdd_id", "parent_ids").order_by("stage__stage_id", "rdd_id")
        )
        return (app.name, app.status, app.started_at, app.ended_at, jobs, stages, ops)

    assert shape("local-in-order") == shape("local-shuffled")


def test_stage_before_its_job_creates_placeholders_that_fill_in(post_events):
    post_events(
        [
            event(
                "stage_completed",
                "local-2",
                5,
                stage_id=3,
                attempt=0,
                job_id=1,
                status="succeeded",
                parent_stage_ids=[],
                name="count at x.py:1",
            )
        ]
    )
    app = Application.objects.get(app_id="local-2")
    assert app.status == "unknown" and app.name == ""
    assert Job.objects.get(application=app, job_id=1).status == "unknown"
    post_events(
        [
            event("application_start", "local-2", 0, name="late start"),
            event("job_start", "local-2", 1, job_id=1, stage_ids=[3]),
        ]
    )
    app.refresh_from_db()
    assert (app.name, app.status) == ("late start", "running")
    # The job start came after the stage completed: the stage keeps its final status.
    assert Stage.objects.get(application=app, stage_id=3).status == "succeeded"


def test_a_newer_stage_attempt_replaces_a_failed_one_and_old_events_are_ignored(post_events):
    common: dict[str, Any] = {"parent_stage_ids": [], "name": "s", "job_id": 0}
    post_events(
        [
            event("stage_completed", stage_id=0, attempt=0, status="failed", failure_reason="lost", **common),
            event("stage_completed", stage_id=0, attempt=1, status="succeeded", **common),
            event("stage_submitted", "local-1", 0, "late-attempt-0", stage_id=0, attempt=0, **common),
        ]
    )
    stage = Stage.objects.get(stage_id=0)
    assert (stage.attempt, stage.status, stage.failure_reason) == (1, "succeeded", "")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"events": [{"type": "job_start", "app_id": "a", "time": 1, "job_id": 1}]}, "event_id"),
        ({"events": [{"event_id": "x", "type": "job_start", "app_id": "a", "time": 1}]}, "job_id"),
        ({"events": [{"event_id": "x", "type": "job_start", "app_id": "a", "time": "soon", "job_id": 1}]}, "time"),
        ({"events": [{"event_id": "x", "type": "job_start", "app_id": "a", "time": 1, "job_id": "one"}]}, "job_id"),
        ({"events": [{"event_id": "x", "type": "teleport", "app_id": "a", "time": 1}]}, "type"),
        (
            {
                "events": [
                    {
                        "event_id": "x",
                        "type": "job_end",
                        "app_id": "a b/c",
                        "time": 1,
                        "job_id": 1,
                        "status": "succeeded",
                    }
                ]
            },
            "app_id",
        ),
        (
            {
                "events": [
                    {"event_id": "x", "type": "job_end", "app_id": "a", "time": 1, "job_id": 1, "status": "maybe"}
                ]
            },
            "status",
        ),
        (
            {
                "events": [
                    {
                        "event_id": "x",
                        "type": "stage_completed",
                        "app_id": "a",
                        "time": 1,
                        "stage_id": 1,
                        "status": "succeeded",
                        "metrics": {"tasks": -3},
                    }
                ]
            },
            "tasks",
        ),
        ({"events": [{"event_id": "x", "type": "job_start", "app_id": "a", "time": 1, "job_id": 2**70}]}, "job_id"),
        ({"events": []}, "events"),
        ({"events": "all of them"}, "events"),
        ({"events": [17]}, "events"),
        ({}, "events"),
    ],
)
def test_a_malformed_event_is_a_400_naming_the_field_and_stores_nothing(api_client, agent_token, body, field):
    before = _snapshot()
    response = api_client.post(
        "/api/v1/ingest/events/", body, format="json", HTTP_AUTHORIZATION=f"Bearer {agent_token}"
    )
    assert response.status_code == 400
    assert field in json.dumps(response.json())
    assert _snapshot() == before


def test_one_bad_event_rejects_the_whole_batch(post_events):
    events = word_count_with_join()
    events[4] = {**events[4], "direction": "sideways"}
    response = post_events(events)
    assert response.status_code == 400
    assert response.json() == {"events": {"4": {"direction": ['"sideways" is not a valid choice.']}}}
    assert Application.objects.count() == 0


def test_more_events_than_the_limit_is_a_400(post_events, settings):
    settings.LINEAGE = {**settings.LINEAGE, "INGEST_MAX_EVENTS": 3}
    response = post_events(word_count_with_join())
    assert response.status_code == 400
    assert "no more than 3" in json.dumps(response.json())


def test_a_huge_body_is_a_413(api_client, agent_token, settings):
    settings.LINEAGE = {**settings.LINEAGE, "INGEST_MAX_BYTES": 10_000}
    body = json.dumps({"events": [event("job_start", job_id=1, description="x" * 20_000)]})
    response = api_client.post(
        "/api/v1/ingest/events/", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {agent_token}"
    )
    assert response.status_code == 413
    assert "limit is 10000" in response.json()["detail"]


def test_invalid_json_is_a_400(api_client, agent_token):
    response = api_client.post(
        "/api/v1/ingest/events/",
        "{not json",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {agent_token}",
    )
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["detail"]


@pytest.mark.parametrize("header", [None, "Bearer lat_wrong", "Token abc", "Bearer", "Bearer a b"])
def test_missing_or_bad_tokens_are_401(api_client, header):
    headers = {"HTTP_AUTHORIZATION": header} if header else {}
    response = api_client.post("/api/v1/ingest/events/", {"events": word_count_with_join()}, format="json", **headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert Application.objects.count() == 0


def test_a_revoked_token_is_refused(post_events, team):
    token, raw = create_agent_token(team, "soon revoked")
    assert post_events(word_count_with_join()[:1], token=raw).status_code == 200
    revoke_token(token)
    assert post_events(word_count_with_join()[1:2], token=raw).status_code == 401


def test_tokens_are_stored_hashed(team):
    token, raw = create_agent_token(team, "hashed")
    assert raw not in (token.token_hash, token.prefix) and raw.startswith(token.prefix)


def test_applications_belong_to_the_team_of_the_token_that_reported_them(post_events, team, agent_token):
    assert post_events(word_count_with_join("local-1")).status_code == 200
    app = Application.objects.get(app_id="local-1")
    assert (app.team, app.agent_token.prefix) == (team, agent_token[:10])


def test_a_token_cannot_write_another_teams_application_and_the_batch_is_refused_whole(post_events):
    assert post_events(word_count_with_join("local-1")[:2]).status_code == 200
    other_raw = create_agent_token(create_team("other"), "theirs")[1]
    mixed = [*word_count_with_join("local-2")[:2], *word_count_with_join("local-1")[2:4]]
    response = post_events(mixed, token=other_raw)
    assert response.status_code == 403
    assert response.json()["app_ids"] == ["local-1"] and "another team" in response.json()["detail"]
    assert not Application.objects.filter(app_id="local-2").exists()
    assert IngestedEvent.objects.filter(application__app_id="local-1").count() == 2


def test_a_personal_token_cannot_post_events(post_events, make_member):
    from lineage_server.accounts.services import create_personal_token

    raw = create_personal_token(make_member("ada", "admin"), "mine")[1]
    response = post_events(word_count_with_join()[:1], token=raw)
    assert response.status_code == 401 and "personal token" in response.json()["detail"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
_fields = st.fixed_dictionaries(
    {
        "event_id": _json | st.text(max_size=5),
        "type": st.sampled_from(
            sorted(
                [
                    "application_start",
                    "job_start",
                    "job_end",
                    "stage_submitted",
                    "stage_completed",
                    "dataset_io",
                    "python_operators",
                    "capture_point",
                    "bogus",
                ]
            )
        ),
        "app_id": st.sampled_from(["local-9", "", "x/y"]),
        "time": _json | st.integers(),
    },
    optional={
        k: _json
        for k in (
            "job_id",
            "stage_id",
            "stage_ids",
            "operators",
            "metrics",
            "status",
            "path",
            "direction",
            "name",
            "parent_stage_ids",
            "rdd_id",
            "kind",
            "location",
            "missing",
        )
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=st.lists(_fields | _json, max_size=3))
def test_no_payload_gives_a_500(post_events, events):
    response = post_events(events)
    assert response.status_code in (200, 400), response.content


def test_non_standard_json_numbers_are_a_400(api_client, agent_token):
    body = '{"events": [{"event_id": "x", "type": "job_start", "app_id": "a", "time": NaN, "job_id": 1}]}'
    response = api_client.post(
        "/api/v1/ingest/events/", body, content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {agent_token}"
    )
    assert response.status_code == 400


def _many_jobs(app_id: str, jobs: int) -> list[dict[str, Any]]:
    """An application of ``jobs`` jobs of two stages each, every stage with three operators and a dataset read."""
    events = [event("application_start", app_id, 0, name="many")]
    for job_id in range(jobs):
        stage_ids = [2 * job_id, 2 * job_id + 1]
        events.append(event("job_start", app_id, 1, job_id=job_id, stage_ids=stage_ids))
        for sid in stage_ids:
            stage: dict[str, Any] = {
                "stage_id": sid, "attempt": 0, "name": f"s{sid}", "num_tasks": 2, "parent_stage_ids": [],
                "job_id": job_id, "operators": [operator(10 * sid + i, "op", []) for i in range(3)],
            }
            events.append(event("stage_submitted", app_id, 2, **stage))
            events.append(event("stage_completed", app_id, 3, **stage, status="succeeded", metrics={"tasks": 2}))
        events.append(event("dataset_io", app_id, 4, path=f"file:/in/{job_id % 3}", direction="read", job_id=job_id))
        events.append(event("job_end", app_id, 5, job_id=job_id, status="succeeded"))
    return events + [event("application_end", app_id, 9)]


def test_a_batch_costs_the_same_queries_however_many_events_it_holds(post_events, django_assert_max_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    post_events([event("application_start", "local-first", 0, name="notes the token's first use")])
    counts = []
    for app_id, jobs in (("local-small", 1), ("local-big", 12)):
        with CaptureQueriesContext(connection) as queries:
            assert post_events(_many_jobs(app_id, jobs)).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1], counts  # 9 events or 86: one bulk upsert per kind of row
    app = Application.objects.get(app_id="local-big")
    assert (app.jobs.count(), app.stages.count(), Operator.objects.filter(application=app).count()) == (12, 24, 72)
    assert {s.status for s in app.stages.all()} == {"succeeded"} and app.status == "succeeded"
    assert sorted(app.jobs.get(job_id=5).stages.values_list("stage_id", flat=True)) == [10, 11]
    # All of it again, and two jobs more: only the new events apply.
    again = _many_jobs("local-big", 14)
    with django_assert_max_num_queries(counts[0]):
        assert post_events(again).json() == {"accepted": 14, "duplicates": 86}
    assert app.jobs.count() == 14 and DatasetIO.objects.filter(application=app).count() == 14
