"""Management commands of teams, members and agent tokens, and the one-machine setup of `make run`."""

from __future__ import annotations

import io
import stat

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from lineage_server.accounts.models import AgentToken, AuditEvent, Membership, Team
from lineage_server.accounts.services import find_active_agent_token

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_create_team_member_and_token_commands():
    alice = get_user_model().objects.create_user("alice", password="pw-alice-long")
    get_user_model().objects.create_user("bob", password="pw-bob-long")
    assert "Created team data-eng with admin alice" in _run("create_team", "data-eng", "--admin", "alice")
    assert Membership.objects.get(team__slug="data-eng", user=alice).role == "admin"
    assert "bob is analyst in data-eng" in _run("team_member", "data-eng", "bob", "--role", "analyst")
    raw = _run("create_agent_token", "nightly", "--team", "data-eng", "--quiet").strip()
    token = find_active_agent_token(raw)
    assert token is not None and token.team.slug == "data-eng"
    assert "data-eng  nightly  active" in _run("revoke_agent_token", "--list", "--team", "data-eng")
    assert "Revoked" in _run("revoke_agent_token", "nightly")
    assert find_active_agent_token(raw) is None
    actions = list(AuditEvent.objects.filter(team__slug="data-eng").order_by("id").values_list("actor_label", "action"))
    assert actions == [
        ("command:create_team", "team.create"),
        ("command:create_team", "member.add"),
        ("command:team_member", "member.add"),
        ("command:create_agent_token", "agent_token.create"),
        ("command:revoke_agent_token", "agent_token.revoke"),
    ]


def test_commands_explain_what_is_wrong():
    with pytest.raises(CommandError, match="No team 'nope'"):
        _run("create_agent_token", "x", "--team", "nope")
    with pytest.raises(CommandError, match="lowercase"):
        _run("create_team", "Bad Slug")
    get_user_model().objects.create_user("solo", password="pw-solo-long")
    _run("create_team", "t1", "--admin", "solo")
    with pytest.raises(CommandError, match="last admin"):
        _run("team_member", "t1", "solo", "--remove")


def test_ensure_local_setup_is_idempotent_and_keeps_secrets_private(tmp_path):
    first = _run("ensure_local_setup", "--var", str(tmp_path)).split()
    password_file, token_file = tmp_path / "admin-password", tmp_path / "agent-token"
    assert first == [str(password_file), str(token_file)]
    for path in (password_file, token_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password_file.read_text())
    token = token_file.read_text()
    _run("ensure_local_setup", "--var", str(tmp_path))
    assert token_file.read_text() == token  # still valid: kept
    assert (Team.objects.count(), AgentToken.objects.count()) == (1, 1)
    AgentToken.objects.update(revoked_at="2026-01-01T00:00:00Z")
    _run("ensure_local_setup", "--var", str(tmp_path))
    assert token_file.read_text() != token and find_active_agent_token(token_file.read_text().strip())
