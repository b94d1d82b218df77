"""Every API endpoint and method, called by each kind of caller: the status each must get.

Callers: anonymous, ``outsider`` (an admin of another team), and the test team's viewer, analyst
and admin. A test fails if an endpoint of the OpenAPI schema is missing from the table, so a new
endpoint cannot ship without its permission row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from lineage_server.accounts.models import AgentToken, PersonalToken
from lineage_server.accounts.services import create_agent_token, create_personal_token, create_team, set_member_role
from lineage_server.catalog.models import Application, Dataset, DatasetIO, Operator
from lineage_server.provenance.services import create_graph
from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import ask_trace, ask_whatif
from tests.conftest import FAST_PASSWORD_HASHER, TEAM_SLUG, member, post_batch
from tests.lineage_server.events import event, word_count_with_join
from tests.lineage_server.openlineage_events import spark_run

pytestmark = pytest.mark.django_db

CALLERS = ("anonymous", "outsider", "viewer", "analyst", "admin")

# (method, path template, statuses for anonymous, outsider, viewer, analyst, admin)
# 404 for the outsider: another team's objects are not there at all, never a 403 that reveals them.
TABLE: list[tuple[str, str, tuple[int, ...]]] = [
    ("GET", "/api/v1/applications/", (401, 200, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/", (401, 404, 200, 200, 200)),
    ("DELETE", "/api/v1/applications/{app_id}/", (401, 404, 403, 403, 204)),
    ("GET", "/api/v1/applications/{app_id}/graph/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/pipeline/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/columns/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/jobs/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/jobs/{job_id}/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/stages/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/stages/{stage_id}/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/operators/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/operators/{id}/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/datasets/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/datasets/{id}/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/capture-points/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/capture-points/{capture_id}/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/applications/{app_id}/capture-points/sample/?capture_id={capture_id}", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/datasets/", (401, 200, 200, 200, 200)),
    ("GET", "/api/v1/datasets/{id}/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/datasets/{id}/applications/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/datasets/{id}/graph/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/datasets/{id}/columns/", (401, 404, 200, 200, 200)),
    # a member gets past the permission to the parameter check: the world's dataset has no column lineage
    ("GET", "/api/v1/datasets/{id}/column-impact/?column=x", (401, 404, 400, 400, 400)),
    # Agents only: people (session or personal token) are not agents.
    ("POST", "/api/v1/ingest/events/", (401, 401, 401, 401, 401)),
    ("POST", "/api/v1/lineage", (401, 401, 401, 401, 401)),
    ("POST", "/api/v1/lineage/batch", (401, 401, 401, 401, 401)),
    ("GET", "/api/v1/me/", (401, 200, 200, 200, 200)),
    ("GET", "/api/v1/me/tokens/", (401, 200, 200, 200, 200)),
    ("POST", "/api/v1/me/tokens/", (401, 201, 201, 201, 201)),
    # {personal_token} is the admin's own token: everyone else gets a 404.
    ("GET", "/api/v1/me/tokens/{personal_token}/", (401, 404, 404, 404, 200)),
    ("DELETE", "/api/v1/me/tokens/{personal_token}/", (401, 404, 404, 404, 204)),
    ("GET", "/api/v1/teams/", (401, 200, 200, 200, 200)),
    ("POST", "/api/v1/teams/", (401, 403, 403, 403, 403)),  # site admins (superusers) only
    ("GET", "/api/v1/teams/{slug}/", (401, 404, 200, 200, 200)),
    ("GET", "/api/v1/teams/{slug}/members/", (401, 404, 200, 200, 200)),
    ("POST", "/api/v1/teams/{slug}/members/", (401, 404, 403, 403, 201)),
    ("GET", "/api/v1/teams/{slug}/members/{username}/", (401, 404, 200, 200, 200)),
    ("PATCH", "/api/v1/teams/{slug}/members/{username}/", (401, 404, 403, 403, 200)),
    ("DELETE", "/api/v1/teams/{slug}/members/{username}/", (401, 404, 403, 403, 204)),
    ("GET", "/api/v1/teams/{slug}/agent-tokens/", (401, 404, 403, 403, 200)),
    ("POST", "/api/v1/teams/{slug}/agent-tokens/", (401, 404, 403, 403, 201)),
    ("GET", "/api/v1/teams/{slug}/agent-tokens/{id}/", (401, 404, 403, 403, 200)),
    ("DELETE", "/api/v1/teams/{slug}/agent-tokens/{id}/", (401, 404, 403, 403, 204)),
    ("GET", "/api/v1/teams/{slug}/audit/", (401, 404, 403, 403, 200)),
    # Traces: viewers read; analysts ask and re-run; the owner (the analyst) or an admin edits, cancels, deletes.
    # The outsider's POST names an application not in their teams: a 400 saying so.
    ("GET", "/api/v1/traces/", (401, 200, 200, 200, 200)),
    ("POST", "/api/v1/traces/", (401, 400, 403, 202, 202)),
    ("GET", "/api/v1/traces/{trace}/", (401, 404, 200, 200, 200)),
    ("PATCH", "/api/v1/traces/{trace}/", (401, 404, 403, 200, 200)),
    ("DELETE", "/api/v1/traces/{trace}/", (401, 404, 403, 204, 204)),
    ("POST", "/api/v1/traces/{trace}/cancel/", (401, 404, 403, 200, 200)),
    ("POST", "/api/v1/traces/{trace}/rerun/", (401, 404, 403, 202, 202)),
    # The trace is still queued: its answer is not there yet (409), for those who may see it.
    ("GET", "/api/v1/traces/{trace}/records/", (401, 404, 409, 409, 409)),
    ("GET", "/api/v1/traces/{trace}/graph/", (401, 404, 409, 409, 409)),
    ("GET", "/api/v1/traces/{trace}/download/{fmt}/", (401, 404, 409, 409, 409)),
    # What-ifs: as traces. The history lists both kinds.
    ("GET", "/api/v1/whatifs/", (401, 200, 200, 200, 200)),
    ("POST", "/api/v1/whatifs/", (401, 400, 403, 202, 202)),
    ("GET", "/api/v1/whatifs/{whatif}/", (401, 404, 200, 200, 200)),
    ("PATCH", "/api/v1/whatifs/{whatif}/", (401, 404, 403, 200, 200)),
    ("DELETE", "/api/v1/whatifs/{whatif}/", (401, 404, 403, 204, 204)),
    ("POST", "/api/v1/whatifs/{whatif}/cancel/", (401, 404, 403, 200, 200)),
    ("POST", "/api/v1/whatifs/{whatif}/rerun/", (401, 404, 403, 202, 202)),
    ("GET", "/api/v1/whatifs/{whatif}/records/", (401, 404, 409, 409, 409)),
    ("GET", "/api/v1/whatifs/{whatif}/graph/", (401, 404, 409, 409, 409)),
    ("GET", "/api/v1/whatifs/{whatif}/download/{fmt}/", (401, 404, 409, 409, 409)),
    # Diffs: as traces; local-1 has no earlier run of its job, so asking one (or again) is a 400 naming why.
    ("GET", "/api/v1/diffs/", (401, 200, 200, 200, 200)),
    ("POST", "/api/v1/diffs/", (401, 400, 403, 400, 400)),
    ("GET", "/api/v1/diffs/{diff}/", (401, 404, 200, 200, 200)),
    ("PATCH", "/api/v1/diffs/{diff}/", (401, 404, 403, 200, 200)),
    ("DELETE", "/api/v1/diffs/{diff}/", (401, 404, 403, 204, 204)),
    ("POST", "/api/v1/diffs/{diff}/cancel/", (401, 404, 403, 200, 200)),
    ("POST", "/api/v1/diffs/{diff}/rerun/", (401, 404, 403, 400, 400)),
    ("GET", "/api/v1/diffs/{diff}/records/", (401, 404, 409, 409, 409)),
    ("GET", "/api/v1/diffs/{diff}/graph/", (401, 404, 409, 409, 409)),
    ("GET", "/api/v1/diffs/{diff}/download/{fmt}/", (401, 404, 409, 409, 409)),
    ("GET", "/api/v1/history/", (401, 200, 200, 200, 200)),
    # Provenance graphs: viewers read and query; analysts make graphs, post triples, ask builds; admins delete.
    # The outsider's POST names a team not theirs: a 400 saying so. Triples sent as application/json: 415.
    # The graph has no index yet: its lineage is a 409 for those who may see it.
    ("GET", "/api/v1/provenance/graphs/", (401, 200, 200, 200, 200)),
    ("POST", "/api/v1/provenance/graphs/", (401, 400, 403, 201, 201)),
    ("GET", "/api/v1/provenance/graphs/{graph}/", (401, 404, 200, 200, 200)),
    ("PATCH", "/api/v1/provenance/graphs/{graph}/", (401, 404, 403, 200, 200)),
    ("DELETE", "/api/v1/provenance/graphs/{graph}/", (401, 404, 403, 403, 204)),
    ("GET", "/api/v1/provenance/graphs/{graph}/triples/", (401, 404, 200, 200, 200)),
    ("POST", "/api/v1/provenance/graphs/{graph}/triples/", (401, 404, 403, 415, 415)),
    ("POST", "/api/v1/provenance/graphs/{graph}/applications/", (401, 404, 403, 400, 400)),
    ("GET", "/api/v1/provenance/graphs/{graph}/builds/", (401, 404, 200, 200, 200)),
    ("POST", "/api/v1/provenance/graphs/{graph}/builds/", (401, 404, 403, 202, 202)),
    ("GET", "/api/v1/provenance/graphs/{graph}/lineage/?item=23", (401, 404, 409, 409, 409)),
]

BODIES: dict[tuple[str, str], Any] = {
    ("POST", "/api/v1/ingest/events/"): {"events": word_count_with_join("local-9")},
    ("POST", "/api/v1/lineage"): spark_run()[0],
    ("POST", "/api/v1/lineage/batch"): spark_run(),
    ("POST", "/api/v1/me/tokens/"): {"name": "script"},
    ("POST", "/api/v1/teams/"): {"slug": "new-team", "name": "New"},
    ("POST", "/api/v1/teams/{slug}/members/"): {"username": "newbie", "role": "viewer"},
    ("PATCH", "/api/v1/teams/{slug}/members/{username}/"): {"role": "analyst"},
    ("POST", "/api/v1/teams/{slug}/agent-tokens/"): {"name": "nightly"},
    ("POST", "/api/v1/traces/"): {"application": "local-1", "capture_point": "cp-in", "direction": "forward",
                                  "selection": {"ids": [0]}},
    ("PATCH", "/api/v1/traces/{trace}/"): {"name": "why is error 42", "pinned": True},
    ("POST", "/api/v1/whatifs/"): {"application": "local-1", "capture_point": "cp-in", "selection": {"ids": [0]}},
    ("PATCH", "/api/v1/whatifs/{whatif}/"): {"note": "without the bad batch"},
    ("POST", "/api/v1/diffs/"): {"application": "local-1"},
    ("PATCH", "/api/v1/diffs/{diff}/"): {"note": "since Monday"},
    ("POST", "/api/v1/provenance/graphs/"): {"team": "test-team", "name": "curation"},
    ("PATCH", "/api/v1/provenance/graphs/{graph}/"): {"description": "the SEC filings"},
    ("POST", "/api/v1/provenance/graphs/{graph}/triples/"): {"src": 1, "dst": 2},
    ("POST", "/api/v1/provenance/graphs/{graph}/applications/"): {"application": "local-1"},
    ("POST", "/api/v1/provenance/graphs/{graph}/builds/"): {},
}


@pytest.fixture(scope="module")
def built_world(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, Any]]:
    """The world, made once for the module in a transaction its end rolls back: each test runs in a
    savepoint of it (pytest-django's ``db``), so what a test changes is gone before the next, as
    when each test made its own world (which took most of this module's time: 442 tests)."""
    from django.db import transaction
    from django.test import override_settings
    from rest_framework.test import APIClient

    with django_db_blocker.unblock(), override_settings(PASSWORD_HASHERS=[FAST_PASSWORD_HASHER]):
        outer = transaction.atomic()
        outer.__enter__()
        try:
            team = create_team(TEAM_SLUG, "Test team")
            token = create_agent_token(team, "test agent")[1]
            client = APIClient()

            def post_events(events: list[dict[str, Any]], token: str = token) -> Any:
                return post_batch(client, events, token)

            def make_member(username: str, role: str | None = "viewer") -> Any:
                return member(username, role, team)

            yield {**_make_world(post_events, team, make_member), "team": team}
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


@pytest.fixture
def team(db: Any, built_world: dict[str, Any]) -> Any:
    """The world's team (the shared fixture of tests/conftest.py would make a second)."""
    return built_world["team"]


@pytest.fixture
def world(db: Any, built_world: dict[str, Any]) -> dict[str, Any]:
    return built_world


def _make_world(post_events: Any, team: Any, make_member: Any) -> dict[str, Any]:
    """The test team's application (with a capture point) and members, and an outsider with their own app."""
    events = word_count_with_join("local-1")
    events.append(
        event(
            "dataset_io", "local-1", 5, path="file:/data/team-only.txt", direction="read", format="text", size_bytes=10
        )
    )
    events.append(
        event(
            "capture_point",
            "local-1",
            6,
            capture_id="cp-in",
            kind="input",
            location="/store/local-1/cp-in",
            rows=3,
            bytes=100,
            parents=[],
        )
    )
    assert post_events(events).status_code == 200
    users = {
        role: make_member(name, role) for name, role in (("vera", "viewer"), ("andy", "analyst"), ("ada", "admin"))
    }
    make_member("sam", "viewer")  # the member PATCHed and DELETEd
    make_member("newbie", None)  # an existing user who is in no team yet
    other = create_team("other", "Other team")
    users["outsider"] = make_member("otto", None)
    set_member_role(other, users["outsider"], "admin")
    outsider_token = create_agent_token(other, "theirs")[1]
    assert post_events(word_count_with_join("local-2"), token=outsider_token).status_code == 200
    personal = create_personal_token(users["admin"], "admin's")[0]
    trace = ask_trace(Application.objects.get(app_id="local-1"), by=users["analyst"], direction="forward",
                      capture_point="cp-in", selection={"ids": [0]})
    whatif = ask_whatif(Application.objects.get(app_id="local-1"), by=users["analyst"], capture_point="cp-in",
                        selection={"ids": [0]})
    graph = create_graph(team, by=users["analyst"], name="filings")
    # a queued diff as ``ask_diff`` leaves it (the world has one run of the job: ask_diff would refuse)
    app = Application.objects.get(app_id="local-1")
    diff = Trace.objects.create(application=app, compared_with=app, created_by=users["analyst"], kind="diff",
                                direction="forward", start_capture_id="cp-in", target="cp-in", question_key="d")
    return {
        "users": users,
        "values": {
            "app_id": "local-1",
            "job_id": 0,
            "stage_id": 0,
            "id": None,  # per path, below
            "capture_id": "cp-in",
            "personal_token": personal.pk,
            "slug": team.slug,
            "username": "sam",
            "trace": trace.pk,
            "whatif": whatif.pk,
            "diff": diff.pk,
            "graph": graph.pk,
            "fmt": "csv",
        },
        "ids": {
            "operators": Operator.objects.filter(application__app_id="local-1").first().pk,
            "app_datasets": DatasetIO.objects.filter(application__app_id="local-1").first().pk,
            "datasets": Dataset.objects.get(path="file:/data/team-only.txt").pk,
            "agent-tokens": AgentToken.objects.filter(team=team).first().pk,
        },
    }


def _url(template: str, world: dict[str, Any]) -> str:
    values = dict(world["values"])
    ids = world["ids"]
    if "{id}" in template:
        if "/operators/" in template:
            values["id"] = ids["operators"]
        elif "/applications/{app_id}/datasets/" in template:
            values["id"] = ids["app_datasets"]
        elif "/datasets/" in template:
            values["id"] = ids["datasets"]
        else:
            values["id"] = ids["agent-tokens"]
    return template.format(**values)


def _client(caller: str, world: dict[str, Any]) -> Any:
    from rest_framework.test import APIClient

    client = APIClient()
    if caller != "anonymous":
        client.force_login(world["users"][caller])
    return client


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize(("method", "template", "statuses"), TABLE, ids=[f"{m} {t}" for m, t, _ in TABLE])
def test_each_endpoint_answers_each_caller_as_the_table_says(world, caller, method, template, statuses):
    expected = statuses[CALLERS.index(caller)]
    body = BODIES.get((method, template))
    response = _client(caller, world).generic(
        method,
        _url(template, world),
        data=None if body is None else json.dumps(body),
        content_type="application/json",
    )
    assert response.status_code == expected, (caller, response.status_code, getattr(response, "data", None))
    if expected == 401:
        assert response["WWW-Authenticate"] == "Bearer"
    if expected in (401, 403, 404):
        assert response.json()["detail"]  # says what is wrong


def test_the_table_covers_every_endpoint_and_method_of_the_schema():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    in_schema = {
        (method.upper(), path)
        for path, operations in schema["paths"].items()
        if path.startswith("/api/v1/")
        for method in operations
        if method in ("get", "post", "put", "patch", "delete")
    }

    def normalise(template: str) -> str:
        """The schema's spelling of a row's path: nested team routes name the slug {team_slug}."""
        path = template.split("?")[0].replace("{personal_token}", "{id}")
        path = path.replace("{trace}", "{id}").replace("{whatif}", "{id}").replace("{graph}", "{id}")
        path = path.replace("{diff}", "{id}")
        return path if path.endswith("teams/{slug}/") else path.replace("teams/{slug}/", "teams/{team_slug}/")

    in_table = {(method, normalise(template)) for method, template, _ in TABLE}
    assert in_schema - in_table == set(), "endpoints without a permission row"
    assert in_table - in_schema == set(), "rows for endpoints that do not exist"


def test_lists_show_only_the_callers_teams(world):
    outsider = _client("outsider", world)
    assert [a["app_id"] for a in outsider.get("/api/v1/applications/").json()["results"]] == ["local-2"]
    assert outsider.get("/api/v1/datasets/?path=team-only").json()["count"] == 0
    assert [t["slug"] for t in outsider.get("/api/v1/teams/").json()["results"]] == ["other"]
    viewer = _client("viewer", world)
    assert [a["app_id"] for a in viewer.get("/api/v1/applications/").json()["results"]] == ["local-1"]
    assert [(t["slug"], t["role"]) for t in viewer.get("/api/v1/teams/").json()["results"]] == [("test-team", "viewer")]


def test_a_superuser_sees_every_team_and_creates_teams(world):
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    root = get_user_model().objects.create_superuser("root", password="x" * 20)
    client = APIClient()
    client.force_login(root)
    assert {a["app_id"] for a in client.get("/api/v1/applications/").json()["results"]} == {"local-1", "local-2"}
    created = client.post("/api/v1/teams/", {"slug": "ml", "name": "ML"}, format="json")
    assert created.status_code == 201 and created.json()["role"] == "admin"
    bad = client.post("/api/v1/teams/", {"slug": "Not A Slug"}, format="json")
    assert bad.status_code == 400 and "slug" in bad.json()


def test_personal_tokens_act_as_their_user_and_agent_tokens_cannot_read(world, agent_token):
    from rest_framework.test import APIClient

    raw = create_personal_token(world["users"]["viewer"], "script")[1]
    client = APIClient()
    mine = client.get("/api/v1/applications/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert [a["app_id"] for a in mine.json()["results"]] == ["local-1"]
    denied = client.delete("/api/v1/applications/local-1/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert denied.status_code == 403 and "admin role" in denied.json()["detail"]
    agent = client.get("/api/v1/applications/", HTTP_AUTHORIZATION=f"Bearer {agent_token}")
    assert agent.status_code == 401 and "Agent tokens" in agent.json()["detail"]
    PersonalToken.objects.filter(token_hash__isnull=False).update(revoked_at="2026-01-01T00:00:00Z")
    assert client.get("/api/v1/applications/", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


def test_session_writes_need_the_csrf_token_but_token_writes_do_not(world):
    from rest_framework.test import APIClient

    browser_like = APIClient(enforce_csrf_checks=True)
    browser_like.force_login(world["users"]["admin"])
    refused = browser_like.delete("/api/v1/applications/local-1/")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    raw = create_personal_token(world["users"]["admin"], "script")[1]
    script = APIClient(enforce_csrf_checks=True)
    assert script.delete("/api/v1/applications/local-1/", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 204


def test_the_last_admin_cannot_leave_or_be_demoted(world):
    admin = _client("admin", world)
    response = admin.patch("/api/v1/teams/test-team/members/ada/", {"role": "viewer"}, format="json")
    assert response.status_code == 400 and "last admin" in response.json()["role"][0]
    assert admin.delete("/api/v1/teams/test-team/members/ada/").status_code == 400
    assert admin.post("/api/v1/teams/test-team/members/", {"username": "vera"}, format="json").status_code == 400
    missing = admin.post("/api/v1/teams/test-team/members/", {"username": "nobody"}, format="json")
    assert missing.status_code == 400 and "No active user" in missing.json()["username"][0]


@pytest.mark.parametrize(
    ("method", "url", "body", "field"),
    [
        ("POST", "/api/v1/teams/test-team/agent-tokens/", {}, "name"),
        ("POST", "/api/v1/teams/test-team/agent-tokens/", {"name": "x" * 129}, "name"),
        ("POST", "/api/v1/me/tokens/", {"name": ""}, "name"),
        ("POST", "/api/v1/teams/test-team/members/", {"username": "newbie", "role": "owner"}, "role"),
        ("POST", "/api/v1/teams/test-team/members/", {"role": "viewer"}, "username"),
        ("PATCH", "/api/v1/teams/test-team/members/sam/", {"role": "root"}, "role"),
        ("POST", "/api/v1/teams/", {"name": "no slug"}, "slug"),
    ],
)
def test_malformed_account_writes_are_a_400_naming_the_field_and_change_nothing(world, method, url, body, field):
    from django.contrib.auth import get_user_model

    from lineage_server.accounts.models import AuditEvent

    client = _client("admin", world)
    get_user_model().objects.filter(pk=world["users"]["admin"].pk).update(is_superuser=True)  # may POST /teams/
    before = AuditEvent.objects.count()
    response = client.generic(method, url, data=json.dumps(body), content_type="application/json")
    assert response.status_code == 400, response.content
    assert field in response.json()
    assert AuditEvent.objects.count() == before
