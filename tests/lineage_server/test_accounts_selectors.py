"""The team pages and the API read members, tokens and the audit trail through the same selectors."""

from __future__ import annotations

import pytest

from lineage_server.accounts.models import Role
from lineage_server.accounts.selectors import (
    personal_tokens_of,
    role_refusal,
    team_agent_tokens,
    team_audit_trail,
    team_members,
)
from lineage_server.accounts.services import create_agent_token, create_personal_token, create_team
from tests.conftest import TEAM_SLUG

pytestmark = pytest.mark.django_db


def test_role_refusal_is_none_for_the_role_or_a_higher_one_and_names_the_role_otherwise(team, make_member):
    analyst = make_member("ann", Role.ANALYST)
    assert role_refusal(analyst, team, Role.VIEWER) is None
    assert role_refusal(analyst, team, Role.ANALYST) is None
    assert role_refusal(analyst, team, Role.ADMIN) == f"This needs the admin role in team {TEAM_SLUG}."
    outsider = make_member("otto", None)
    assert role_refusal(outsider, team, Role.VIEWER) == f"This needs the viewer role in team {TEAM_SLUG}."


def test_selectors_keep_to_their_team_and_user(team, make_member):
    other = create_team("other-team")
    admin = make_member("ada", Role.ADMIN)
    make_member("bob", Role.VIEWER)
    make_member("zed", Role.VIEWER, other)
    mine, _ = create_agent_token(team, "mine", by=admin)
    create_agent_token(other, "theirs")
    personal, _ = create_personal_token(admin, "laptop")
    assert [m.user.username for m in team_members(team)] == ["ada", "bob"]
    assert list(team_agent_tokens(team)) == [mine]
    assert list(personal_tokens_of(admin)) == [personal]
    assert {e.team for e in team_audit_trail(team)} == {team}
    assert "agent_token.create" in {e.action for e in team_audit_trail(team)}


def test_the_team_page_and_the_api_list_the_same_members_tokens_and_audit_events(team, make_member, client):
    admin = make_member("ada", Role.ADMIN)
    make_member("bob", Role.VIEWER)
    create_agent_token(team, "agent one", by=admin)
    client.force_login(admin)
    page = client.get(f"/teams/{TEAM_SLUG}/").context
    api = f"/api/v1/teams/{TEAM_SLUG}"
    members = client.get(f"{api}/members/").json()["results"]
    tokens = client.get(f"{api}/agent-tokens/").json()["results"]
    audit = client.get(f"{api}/audit/").json()["results"]
    assert [m.user.username for m in page["members"]] == [m["username"] for m in members]
    assert [t.name for t in page["tokens"]] == [t["name"] for t in tokens]
    assert [e.action for e in page["audit"]] == [e["action"] for e in audit]
