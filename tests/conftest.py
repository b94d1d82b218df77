"""Shared fixtures: a team with an agent token and members of each role, and a helper to post agent events."""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

TEAM_SLUG = "test-team"
PASSWORD = "a long test password 42"
FAST_PASSWORD_HASHER = "django.contrib.auth.hashers.MD5PasswordHasher"  # tests make many users


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    """Tests make many users; the production hasher is slow on purpose."""
    settings.PASSWORD_HASHERS = [FAST_PASSWORD_HASHER]


@pytest.fixture(autouse=True)
def _static_files_found_per_request(settings: Any) -> None:
    """Every test client's handler makes its own middleware, and WhiteNoise's, made so, lists every
    static file it can serve (about 170, through the finders): a third of a permission test's time.
    Found when asked instead (WhiteNoise's autorefresh, as under runserver); gunicorn's processes list
    them once, as configured."""
    settings.WHITENOISE_AUTOREFRESH = True


@pytest.fixture
def team(db: Any) -> Any:
    from lineage_server.accounts.services import create_team

    return create_team(TEAM_SLUG, "Test team")


@pytest.fixture
def agent_token(team: Any) -> str:
    """A raw agent token of ``team``."""
    from lineage_server.accounts.services import create_agent_token

    return create_agent_token(team, "test agent")[1]


MakeMember = Callable[..., Any]


def member(username: str, role: str | None, team: Any) -> Any:
    """The user ``username`` (made with password PASSWORD if new), with ``role`` in ``team`` (none: no role)."""
    from django.contrib.auth import get_user_model

    from lineage_server.accounts.services import set_member_role

    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        user = get_user_model().objects.create_user(username, password=PASSWORD)
    if role is not None:
        set_member_role(team, user, role)
    return user


@pytest.fixture
def make_member(team: Any) -> MakeMember:
    """make_member(username, role="viewer", team=team) -> a user (password PASSWORD) with that role."""

    def make(username: str, role: str | None = "viewer", in_team: Any = team) -> Any:
        return member(username, role, in_team)

    return make


@pytest.fixture
def api_client() -> Any:
    """An anonymous DRF client."""
    from rest_framework.test import APIClient

    return APIClient()


@pytest.fixture
def client_as(make_member: MakeMember) -> Callable[..., Any]:
    """client_as(username, role="viewer") -> an APIClient logged in (session) as that member of the team."""
    from rest_framework.test import APIClient

    def login(username: str, role: str | None = "viewer", in_team: Any = None) -> Any:
        user = make_member(username, role) if in_team is None else make_member(username, role, in_team)
        client = APIClient()
        client.force_login(user)
        return client

    return login


@pytest.fixture
def viewer_client(client_as: Callable[..., Any]) -> Any:
    """A DRF client of a viewer of the test team (reads everything the team owns)."""
    return client_as("vera", "viewer")


PostEvents = Callable[..., Any]


@pytest.fixture
def post_events(api_client: Any, agent_token: str) -> PostEvents:
    """POST a batch of events to the ingest endpoint with a valid token; returns the response."""

    def post(events: list[dict[str, Any]], token: str | None = agent_token) -> Any:
        return post_batch(api_client, events, token)

    return post


def post_batch(client: Any, events: list[dict[str, Any]], token: str | None) -> Any:
    """POST ``events`` to the ingest endpoint with ``client``, with ``token`` when given."""
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    return client.post("/api/v1/ingest/events/", {"events": events}, format="json", **headers)


# The server's tests that run no Spark, when CI runs them against PostgreSQL and Redis beside this
# pass: scripts/test.sh names their paths (its SERVER_TESTS) in LINEAGE_TESTS_SERVER_ELSEWHERE, and
# the embedded pass leaves them to it, keeping every test that runs Spark (the embedded SQLite
# database and broker are theirs).
def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    paths = tuple(os.environ.get("LINEAGE_TESTS_SERVER_ELSEWHERE", "").split())
    if not paths:
        return
    elsewhere = [item for item in items if item.nodeid.startswith(paths) and item.get_closest_marker("spark") is None]
    if elsewhere:
        config.hook.pytest_deselected(items=elsewhere)
        gone = set(map(id, elsewhere))
        items[:] = [item for item in items if id(item) not in gone]
