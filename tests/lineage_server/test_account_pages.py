"""The login, team and personal token pages through Django's test client: access, forms, CSRF, audit trail."""

from __future__ import annotations

import json
import os
import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import quote

import pytest
from django.test import Client

from tests.conftest import PASSWORD, TEAM_SLUG
from tests.lineage_server.events import word_count_with_join

pytestmark = pytest.mark.django_db

TEAM_PAGE = f"/teams/{TEAM_SLUG}/"
INGEST = "/api/v1/ingest/events/"
NEW_TOKEN = re.compile(r'<code id="new-token">([^<]+)</code>')


class _Forms(HTMLParser):
    """The forms of a page: action and the name/value pairs a browser would send (buttons apart)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []
        self._current: dict[str, Any] | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self._current = {"action": a.get("action"), "method": a.get("method"), "fields": {}, "buttons": {}}
            self.forms.append(self._current)
        elif self._current is None:
            return
        elif tag == "input" and a.get("name"):
            self._current["fields"][a["name"]] = a.get("value") or ""
        elif tag == "select":
            self._select = a["name"]
        elif tag == "option" and self._select is not None:
            fields = self._current["fields"]
            if self._select not in fields or "selected" in a:
                fields[self._select] = a.get("value")
        elif tag == "button" and a.get("name"):
            self._current["buttons"][a["name"]] = a.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._current = None
        elif tag == "select":
            self._select = None


def _forms(response: Any) -> list[dict[str, Any]]:
    parser = _Forms()
    parser.feed(response.content.decode())
    return parser.forms


def _form(response: Any, action: str, having: str | None = None) -> dict[str, Any]:
    """The first form posting to ``action`` (with a field or button named ``having``); fails if none."""
    for form in _forms(response):
        if form["action"] == action and (having is None or having in form["fields"] or having in form["buttons"]):
            return form
    raise AssertionError(f"no form to {action} with {having!r} in {[f['action'] for f in _forms(response)]}")


def _logged_in(user: Any, enforce_csrf_checks: bool = False) -> Client:
    client = Client(enforce_csrf_checks=enforce_csrf_checks)
    client.force_login(user)
    return client


def _last_audit() -> tuple[str, str, str, str | None]:
    from lineage_server.accounts.models import AuditEvent

    event = AuditEvent.objects.select_related("team").first()  # newest first
    assert event is not None
    return event.action, event.actor_label, event.target, event.team.slug if event.team else None


def _state() -> tuple[Any, ...]:
    """Everything the account forms can change, to check that a refused post changed nothing."""
    from lineage_server.accounts.models import AgentToken, AuditEvent, Membership, PersonalToken

    return (
        sorted(Membership.objects.values_list("team__slug", "user__username", "role")),
        sorted(AgentToken.objects.values_list("pk", "revoked_at")),
        sorted(PersonalToken.objects.values_list("pk", "revoked_at")),
        AuditEvent.objects.count(),
    )


def _role(username: str, team_slug: str = TEAM_SLUG) -> str | None:
    from lineage_server.accounts.models import Membership

    memberships = Membership.objects.filter(team__slug=team_slug, user__username=username)
    return memberships.values_list("role", flat=True).first()


def _ingest(token: str, app_id: str) -> Any:
    from rest_framework.test import APIClient

    events = {"events": word_count_with_join(app_id)}
    return APIClient().post(INGEST, events, format="json", HTTP_AUTHORIZATION=f"Bearer {token}")


@pytest.fixture
def admin(make_member: Any) -> Any:
    """ada, the only admin of the test team."""
    return make_member("ada", "admin")


@pytest.fixture
def admin_client(admin: Any) -> Client:
    return _logged_in(admin)


# Access


@pytest.mark.parametrize(
    ("method", "url"),
    [
        ("get", "/"),
        ("get", "/applications/local-1/"),
        ("get", "/teams/"),
        ("get", TEAM_PAGE),
        ("get", "/account/tokens/"),
        ("post", f"{TEAM_PAGE}members/"),
        ("post", f"{TEAM_PAGE}members/ada/"),
        ("post", f"{TEAM_PAGE}agent-tokens/"),
        ("post", "/account/tokens/new/"),
    ],
)
def test_anonymous_visitors_are_sent_to_the_login_form(client, admin, method, url):
    before = _state()
    data = {"name": "x", "username": "ada", "role": "viewer"} if method == "post" else {}
    response = getattr(client, method)(url, data)
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next={quote(url)}"
    assert _state() == before
    login = client.get(response["Location"])
    assert _form(login, "/login/")["fields"]["next"] == url


@pytest.mark.parametrize("role", ["viewer", "analyst"])
def test_a_non_admin_sees_the_members_and_nothing_of_the_admin_sections(make_member, admin, role):
    response = _logged_in(make_member("vera", role)).get(TEAM_PAGE)
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<strong id="my-role">{role}</strong>' in html
    assert 'data-username="ada"' in html and 'data-username="vera"' in html
    assert [form["action"] for form in _forms(response)] == ["/logout/"], "only the header's logout form"
    for admin_only in ('id="agent-tokens"', 'id="audit"', 'id="add-member"', 'id="create-token"', "lat_"):
        assert admin_only not in html


@pytest.mark.parametrize("role", ["viewer", "analyst"])
def test_a_non_admin_is_refused_every_admin_form(make_member, admin, team, role):
    from lineage_server.accounts.services import create_agent_token

    make_member("bob", None)
    token, _ = create_agent_token(team, "ci")
    client = _logged_in(make_member("vera", role))
    before = _state()
    posts = [
        (f"{TEAM_PAGE}members/", {"username": "bob", "role": "admin"}),
        (f"{TEAM_PAGE}members/vera/", {"role": "admin"}),
        (f"{TEAM_PAGE}members/ada/", {"role": "viewer"}),
        (f"{TEAM_PAGE}members/ada/", {"remove": "1"}),
        (f"{TEAM_PAGE}agent-tokens/", {"name": "mine"}),
        (f"{TEAM_PAGE}agent-tokens/{token.pk}/revoke/", {}),
    ]
    for url, data in posts:
        assert client.post(url, data).status_code == 403, url
    assert _state() == before


def test_another_teams_page_forms_and_tokens_are_404(make_member, admin_client):
    from lineage_server.accounts.services import create_agent_token, create_personal_token, create_team

    other = create_team("other-team", "Other")
    otto = make_member("otto", "admin", other)
    other_token_id = create_agent_token(other, "theirs")[0].pk
    otto_token = create_personal_token(otto, "otto's")[0]
    before = _state()
    assert admin_client.get("/teams/other-team/").status_code == 404
    assert "other-team" not in admin_client.get("/teams/").content.decode()
    posts = [
        ("/teams/other-team/members/", {"username": "ada", "role": "admin"}),
        ("/teams/other-team/members/otto/", {"remove": "1"}),
        ("/teams/other-team/agent-tokens/", {"name": "mine"}),
        (f"/teams/other-team/agent-tokens/{other_token_id}/revoke/", {}),
        # Another team's token or another user's token through one's own URLs.
        (f"{TEAM_PAGE}agent-tokens/{other_token_id}/revoke/", {}),
        (f"{TEAM_PAGE}members/otto/", {"remove": "1"}),
        (f"/account/tokens/{otto_token.pk}/revoke/", {}),
    ]
    for url, data in posts:
        assert admin_client.post(url, data).status_code == 404, url
    assert _state() == before


# Members


def test_an_admin_adds_a_member_changes_their_role_and_removes_them(make_member, admin_client):
    make_member("bob", None)
    response = admin_client.post(f"{TEAM_PAGE}members/", {"username": "bob", "role": "analyst"}, follow=True)
    assert response.redirect_chain == [(TEAM_PAGE, 302)]
    assert "bob is analyst in test-team." in response.content.decode()
    assert _role("bob") == "analyst"
    assert _form(response, f"{TEAM_PAGE}members/bob/", "role")["fields"]["role"] == "analyst"
    assert _last_audit() == ("member.add", "ada", "bob", TEAM_SLUG)

    response = admin_client.post(f"{TEAM_PAGE}members/bob/", {"role": "admin"}, follow=True)
    assert "bob is now admin." in response.content.decode()
    assert _role("bob") == "admin"
    assert _last_audit() == ("member.role", "ada", "bob", TEAM_SLUG)

    response = admin_client.post(f"{TEAM_PAGE}members/bob/", {"remove": "1"}, follow=True)
    assert "Removed bob from test-team." in response.content.decode()
    assert _role("bob") is None and 'data-username="bob"' not in response.content.decode()
    assert _last_audit() == ("member.remove", "ada", "bob", TEAM_SLUG)


def test_adding_an_unknown_user_shows_an_error_and_adds_nobody(admin_client):
    before = _state()
    response = admin_client.post(f"{TEAM_PAGE}members/", {"username": "nobody", "role": "viewer"}, follow=True)
    assert "No active user named &#x27;nobody&#x27;" in response.content.decode()
    assert _state() == before


@pytest.mark.parametrize("username", ["ada", "vera"])
def test_adding_an_existing_member_is_refused_and_keeps_their_role(make_member, admin_client, username):
    """Like POST /api/v1/teams/<slug>/members/: the add form never changes a role (nor demotes the last admin)."""
    make_member("vera", "viewer")
    before = _state()
    response = admin_client.post(f"{TEAM_PAGE}members/", {"username": username, "role": "analyst"}, follow=True)
    assert response.status_code == 200
    assert f"{username} is already a member; change the role in the table." in response.content.decode()
    assert _state() == before


@pytest.mark.parametrize("change", [{"role": "analyst"}, {"role": "viewer"}, {"remove": "1"}])
def test_the_last_admin_can_be_neither_demoted_nor_removed(make_member, admin_client, change):
    make_member("vera", "viewer")
    before = _state()
    response = admin_client.post(f"{TEAM_PAGE}members/ada/", change, follow=True)
    assert response.status_code == 200
    assert "ada is the last admin of test-team: make another admin first." in response.content.decode()
    assert _state() == before and _role("ada") == "admin"


# Agent tokens


def _create_agent_token(client: Client, name: str = "nightly etl") -> tuple[Any, str]:
    response = client.post(f"{TEAM_PAGE}agent-tokens/", {"name": name})
    assert response.status_code == 200
    found = NEW_TOKEN.findall(response.content.decode())
    assert len(found) == 1
    return response, found[0]


def test_a_new_agent_token_is_shown_once_and_only_its_hash_is_kept(admin_client, team):
    from lineage_server.accounts.models import AgentToken, AuditEvent, hash_token

    response, raw = _create_agent_token(admin_client)
    assert raw.startswith("lat_") and len(raw) > 40
    cache_control = {part.strip() for part in response["Cache-Control"].split(",")}
    assert {"no-store", "no-cache", "private"} <= cache_control

    token = AgentToken.objects.get(name="nightly etl")
    assert token.team == team and token.created_by.username == "ada"
    assert token.token_hash == hash_token(raw) and token.prefix == raw[:10]
    stored = json.dumps([list(AgentToken.objects.values()), list(AuditEvent.objects.values())], default=str)
    assert raw not in stored and raw[10:] not in stored
    assert _last_audit() == ("agent_token.create", "ada", f"nightly etl ({raw[:10]}…)", TEAM_SLUG)

    reload = admin_client.get(TEAM_PAGE).content.decode()
    assert raw not in reload and 'id="new-token"' not in reload
    assert f'data-prefix="{raw[:10]}"' in reload, "the list names the token by its prefix"


def test_a_new_agent_token_writes_its_teams_applications_until_revoked(admin_client, team):
    from lineage_server.accounts.models import AgentToken
    from lineage_server.catalog.models import Application

    _, raw = _create_agent_token(admin_client)
    answer = _ingest(raw, "local-42")
    assert answer.status_code == 200 and answer.json()["accepted"] == len(word_count_with_join())
    assert Application.objects.get(app_id="local-42").team == team
    assert _last_audit() == ("application.capture", f"agent:nightly etl ({raw[:10]}…)", "local-42", TEAM_SLUG)

    token = AgentToken.objects.get(name="nightly etl")
    revoke = _form(admin_client.get(TEAM_PAGE), f"{TEAM_PAGE}agent-tokens/{token.pk}/revoke/")
    response = admin_client.post(revoke["action"], follow=True)
    assert f"Revoked nightly etl ({raw[:10]}…)." in response.content.decode()
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert _last_audit() == ("agent_token.revoke", "ada", f"nightly etl ({raw[:10]}…)", TEAM_SLUG)
    row = re.search(rf'<tr data-prefix="{re.escape(raw[:10])}">.*?</tr>', response.content.decode(), re.S)
    assert row and "revoked" in row.group(0) and "<form" not in row.group(0)

    refused = _ingest(raw, "local-43")
    assert refused.status_code == 401
    assert not Application.objects.filter(app_id="local-43").exists()


# Personal tokens


def test_a_personal_token_is_shown_once_and_acts_as_its_user_until_revoked(admin, admin_client, api_client):
    from lineage_server.accounts.models import PersonalToken, hash_token

    response = admin_client.post("/account/tokens/new/", {"name": "laptop"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    [raw] = NEW_TOKEN.findall(response.content.decode())
    assert raw.startswith("lpt_")
    token = PersonalToken.objects.get(user=admin, name="laptop")
    assert token.token_hash == hash_token(raw)
    assert _last_audit() == ("personal_token.create", "ada", f"laptop ({raw[:10]}…)", None)
    assert raw not in admin_client.get("/account/tokens/").content.decode()

    me = api_client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert me.status_code == 200 and me.json()["username"] == "ada"
    assert [t["slug"] for t in me.json()["teams"]] == [TEAM_SLUG]

    response = admin_client.post(f"/account/tokens/{token.pk}/revoke/", follow=True)
    assert response.redirect_chain == [("/account/tokens/", 302)]
    assert _last_audit() == ("personal_token.revoke", "ada", f"laptop ({raw[:10]}…)", None)
    assert api_client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401


# CSRF: every form of the pages posts with Django's token, and nothing happens without it.

CSRF_CASES = {
    # name: (page, form action, field the form has, what to fill in, check after a successful post)
    "add member": (TEAM_PAGE, "members/", "username", {"username": "bob", "role": "analyst"}, "bob analyst"),
    "change role": (TEAM_PAGE, "members/carl/", "role", {"role": "analyst"}, "carl analyst"),
    "remove member": (TEAM_PAGE, "members/carl/", "remove", {}, "carl gone"),
    "create agent token": (TEAM_PAGE, "agent-tokens/", "name", {"name": "ci"}, "agent token"),
    "revoke agent token": (TEAM_PAGE, "agent-tokens/{agent}/revoke/", None, {}, "agent revoked"),
    "create personal token": ("/account/tokens/", "/account/tokens/new/", "name", {"name": "ci"}, "personal token"),
    "revoke personal token": ("/account/tokens/", "/account/tokens/{personal}/revoke/", None, {}, "personal revoked"),
    "log out": ("/teams/", "/logout/", None, {}, "logged out"),
}


@pytest.mark.parametrize("case", CSRF_CASES)
def test_forms_refuse_a_post_without_the_csrf_token_and_work_with_the_rendered_one(make_member, admin, team, case):
    from lineage_server.accounts.models import AgentToken, PersonalToken
    from lineage_server.accounts.services import create_agent_token, create_personal_token

    make_member("bob", None)
    make_member("carl", "viewer")
    agent = create_agent_token(team, "old agent", by=admin)[0]
    personal = create_personal_token(admin, "old personal")[0]
    page, action, having, fill, expected = CSRF_CASES[case]
    action = action.format(agent=agent.pk, personal=personal.pk)
    if not action.startswith("/"):
        action = TEAM_PAGE + action
    client = _logged_in(admin, enforce_csrf_checks=True)
    form = _form(client.get(page), action, having)
    assert form["method"] == "post" and form["fields"].get("csrfmiddlewaretoken"), f"{action} has no CSRF token"
    data = {**form["fields"], **form["buttons"], **fill}
    before = _state()

    without = {k: v for k, v in data.items() if k != "csrfmiddlewaretoken"}
    assert client.post(action, without).status_code == 403
    assert _state() == before
    assert client.get("/teams/").status_code == 200, "still logged in"

    assert client.post(action, data).status_code in (200, 302)
    agent.refresh_from_db()
    personal.refresh_from_db()
    done = {
        "bob analyst": lambda: _role("bob") == "analyst",
        "carl analyst": lambda: _role("carl") == "analyst",
        "carl gone": lambda: _role("carl") is None,
        "agent token": lambda: AgentToken.objects.filter(name="ci", team=team).exists(),
        "agent revoked": lambda: agent.revoked_at is not None,
        "personal token": lambda: PersonalToken.objects.filter(name="ci", user=admin).exists(),
        "personal revoked": lambda: personal.revoked_at is not None,
        "logged out": lambda: client.get("/teams/").status_code == 302,
    }
    assert done[expected]()


# Login and lockout


def _log_in(client: Client, username: str, password: str, address: str = "10.0.0.1", **extra: str) -> Any:
    return client.post("/login/", {"username": username, "password": password, **extra}, REMOTE_ADDR=address)


def test_the_right_password_logs_in_and_follows_next(admin):
    client = Client()
    response = _log_in(client, "ada", PASSWORD)
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200

    assert _log_in(Client(), "ada", PASSWORD, next="/teams/")["Location"] == "/teams/"
    assert _log_in(Client(), "ada", PASSWORD, next="https://evil.example/")["Location"] == "/", "no open redirect"


def test_a_wrong_password_shows_the_form_again_with_an_error(admin):
    client = Client()
    response = _log_in(client, "ada", "wrong")
    assert response.status_code == 200
    assert "Wrong username or password." in response.content.decode()
    assert client.get("/").status_code == 302


def test_failures_below_the_limit_do_not_lock_the_username_out(admin, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _log_in(Client(), "ada", "wrong").status_code == 200
    assert _log_in(Client(), "ada", PASSWORD).status_code == 302


def test_repeated_failures_lock_out_that_username_from_that_address_only(admin, make_member, settings):
    limit = settings.AXES_FAILURE_LIMIT
    assert limit == int(os.environ.get("LINEAGE_LOGIN_FAILURE_LIMIT", "5"))
    make_member("bob", "viewer")
    client = Client()
    answers = [_log_in(client, "ada", "wrong").status_code for _ in range(limit)]
    assert answers == [200] * (limit - 1) + [429]

    locked = _log_in(client, "ada", PASSWORD)
    assert locked.status_code == 429
    assert "web/locked_out.html" in [t.name for t in locked.templates]
    assert "Too many failed logins" in locked.content.decode()
    assert client.get("/").status_code == 302, "not logged in"

    assert _log_in(Client(), "bob", PASSWORD).status_code == 302, "another username from the same address"
    assert _log_in(Client(), "ada", PASSWORD, address="10.0.0.2").status_code == 302, "the same one from elsewhere"
