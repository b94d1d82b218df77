"""The audit trail records who captured, deleted, created and revoked what, and outlives its objects."""

from __future__ import annotations

import pytest

from lineage_server.accounts.models import AuditEvent
from tests.lineage_server.events import word_count_with_join

pytestmark = pytest.mark.django_db


def test_api_acts_are_recorded_with_their_actor_and_read_by_team_admins(post_events, agent_token, client_as):
    assert post_events(word_count_with_join("local-1")).status_code == 200
    admin = client_as("ada", "admin")
    created = admin.post("/api/v1/teams/test-team/agent-tokens/", {"name": "nightly"}, format="json").json()
    assert created["token"].startswith("lat_") and created["created_by"] == "ada"
    assert admin.delete(f"/api/v1/teams/test-team/agent-tokens/{created['id']}/").status_code == 204
    client_as("sam", None)
    assert admin.post("/api/v1/teams/test-team/members/", {"username": "sam", "role": "analyst"}).status_code == 201
    assert admin.delete("/api/v1/applications/local-1/").status_code == 204

    trail = admin.get("/api/v1/teams/test-team/audit/").json()["results"]
    rows = [(e["actor"], e["action"], e["target"]) for e in reversed(trail)]
    capture = next(r for r in rows if r[1] == "application.capture")
    assert capture[0].startswith("agent:test agent (lat_") and capture[2] == "local-1"
    by_ada = [(action, target) for actor, action, target in rows if actor == "ada"]
    assert by_ada == [
        ("agent_token.create", "nightly (" + created["prefix"] + "…)"),
        ("agent_token.revoke", "nightly (" + created["prefix"] + "…)"),
        ("member.add", "sam"),
        ("application.delete", "local-1"),
    ]
    deletion = trail[0]
    assert deletion["details"]["rows"] > 0  # what went, kept after the application is gone


def test_the_trail_outlives_a_deleted_user(client_as):
    admin = client_as("ada", "admin")
    admin.post("/api/v1/teams/test-team/agent-tokens/", {"name": "n"}, format="json")
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(username="ada").delete()
    event = AuditEvent.objects.get(action="agent_token.create")
    assert (event.actor, event.actor_label) == (None, "ada")
