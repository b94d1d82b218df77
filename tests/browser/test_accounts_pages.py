"""End to end in chromium: log in, make an agent token on the team page, ingest with it, manage members."""

from __future__ import annotations

import json
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PASSWORD, TEAM_SLUG
from tests.lineage_server.events import word_count_with_join

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Screenshots to look at after a run: team_page.png and team_page_new_token.png.
SCREENSHOT_DIR = Path(tempfile.gettempdir())
TEAM_PAGE = f"/teams/{TEAM_SLUG}/"
APP_ID = "local-1763731400000"


def _post_events(url: str, events: list[dict[str, Any]], token: str) -> int:
    """POST a batch as a capture agent does; returns the HTTP status."""
    request = urllib.request.Request(
        f"{url}/api/v1/ingest/events/",
        data=json.dumps({"events": events}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.load(response)["accepted"] == len(events)
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture
def admin_page(live_server: Any, anonymous_page: Any, make_member: Any) -> Any:
    """A page logged in (by session cookie) as ada, an admin of the test team."""
    from django.test import Client

    client = Client()
    client.force_login(make_member("ada", "admin"))
    cookie = {"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}
    anonymous_page.context.add_cookies([cookie])
    return anonymous_page


def _create_agent_token(page: Any, name: str) -> str:
    page.fill("#create-token input[name='name']", name)
    page.click("#create-token button[type='submit']")
    page.wait_for_selector("#new-token")
    return page.inner_text("#new-token").strip()


def _revoke_agent_token(page: Any, raw: str) -> None:
    row = f"#agent-tokens tr[data-prefix='{raw[:10]}']"
    page.click(f"{row} button:has-text('Revoke')")
    page.wait_for_selector(".messages li:has-text('Revoked')")
    assert "revoked" in page.inner_text(row)
    assert page.locator(f"{row} button").count() == 0


def _audit_rows(page: Any) -> list[list[str]]:
    """The audit table as [who, what, on] rows, newest first."""
    return page.evaluate(
        """() => [...document.querySelectorAll('#audit tbody tr')]
            .map((tr) => [...tr.cells].slice(1).map((td) => td.innerText.trim()))"""
    )


def test_an_anonymous_visit_lands_on_the_login_form_and_logging_in_shows_the_home_page(
    live_server, anonymous_page, make_member
):
    page = anonymous_page
    make_member("ada", "admin")
    page.goto(f"{live_server.url}/")
    page.wait_for_url("**/login/?next=/")
    assert page.locator("h1").inner_text() == "Log in"

    page.fill("input[name='username']", "ada")
    page.fill("input[name='password']", "not the password")
    page.click("button:has-text('Log in')")
    page.wait_for_selector("p.error[role='alert']")
    assert page.input_value("input[name='username']") == "ada"

    page.fill("input[name='password']", PASSWORD)
    page.click("button:has-text('Log in')")
    page.wait_for_url(f"{live_server.url}/")
    page.wait_for_selector("#home-page[data-state='ready']")
    assert page.locator("h1").inner_text() == "Spark lineage"
    assert "ada" in page.inner_text(".site-header .account")

    page.click(".site-header button:has-text('Log out')")
    page.wait_for_url("**/login/")
    page.goto(f"{live_server.url}{TEAM_PAGE}")
    page.wait_for_url(f"**/login/?next={TEAM_PAGE}")


def test_an_agent_token_made_on_the_team_page_ingests_until_revoked_by_its_button(live_server, admin_page):
    page = admin_page
    page.goto(f"{live_server.url}{TEAM_PAGE}")
    assert page.inner_text("#my-role") == "admin"
    raw = _create_agent_token(page, "browser agent")
    assert raw.startswith("lat_")
    page.screenshot(path=SCREENSHOT_DIR / "team_page_new_token.png", full_page=True)

    assert _post_events(live_server.url, word_count_with_join(APP_ID), raw) == 200
    page.goto(f"{live_server.url}/applications/")
    row = f"#applications-page tr[data-app-id='{APP_ID}']"
    page.wait_for_selector(row)
    assert page.inner_text(f"{row} .col-team") == TEAM_SLUG
    assert "wc" in page.inner_text(row)

    page.goto(f"{live_server.url}{TEAM_PAGE}")
    assert page.locator("#new-token").count() == 0, "the raw token is shown once only"
    assert raw not in page.content()
    _revoke_agent_token(page, raw)
    assert _post_events(live_server.url, word_count_with_join("local-1763731500000"), raw) == 401
    token = f"browser agent ({raw[:10]}…)"
    assert _audit_rows(page)[:3] == [
        ["ada", "agent_token.revoke", token],
        [f"agent:{token}", "application.capture", APP_ID],
        ["ada", "agent_token.create", token],
    ]


def test_an_admin_adds_a_member_and_the_audit_trail_shows_what_they_did(live_server, admin_page, make_member):
    page = admin_page
    make_member("bob", None)
    page.goto(f"{live_server.url}{TEAM_PAGE}")
    raw = _create_agent_token(page, "etl")
    _revoke_agent_token(page, raw)

    page.fill("#add-member input[name='username']", "bob")
    page.select_option("#add-member select[name='role']", "analyst")
    page.click("#add-member button:has-text('Add member')")
    page.wait_for_selector(".messages li:has-text('bob is analyst in test-team.')")
    assert page.input_value("#members tr[data-username='bob'] select[name='role']") == "analyst"
    assert page.input_value("#members tr[data-username='ada'] select[name='role']") == "admin"

    assert _audit_rows(page)[:3] == [
        ["ada", "member.add", "bob"],
        ["ada", "agent_token.revoke", f"etl ({raw[:10]}…)"],
        ["ada", "agent_token.create", f"etl ({raw[:10]}…)"],
    ]
    page.screenshot(path=SCREENSHOT_DIR / "team_page.png", full_page=True)
