"""Real-browser fixtures: Debian's chromium driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

import json
import os
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lineage_server.events import event, word_count_with_join

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Screenshots of each step, for a reviewer to look at after a run.
SCREENSHOT_DIR = Path(os.environ.get("LINEAGE_SCREENSHOT_DIR", tempfile.gettempdir()))
FRONTEND_BUNDLE = Path(__file__).resolve().parents[2] / "frontend" / "dist" / "app.js"


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless chromium for the session; skipped off CI when chromium is not installed."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium); browser tests run in CI")
    if not FRONTEND_BUNDLE.exists():
        pytest.fail(f"{FRONTEND_BUNDLE} is missing: build it with `cd frontend && npm ci && npm run build`")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in the test thread; Django then refuses ORM calls
    # there (test setup, seeding) although nothing async touches the database.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def page_errors() -> list[str]:
    """JavaScript and console errors of the test's page; a test that expects some removes them."""
    return []


def _new_page(browser: Any, errors: list[str]) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 1500, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on("console", lambda message: errors.append(f"console: {message.text}") if message.type == "error" else None)
    page.set_default_timeout(15_000)
    return context, page


@pytest.fixture
def anonymous_page(browser: Any, page_errors: list[str]) -> Iterator[Any]:
    """A fresh page, not logged in, that fails the test on any JavaScript or console error."""
    context, page = _new_page(browser, page_errors)
    yield page
    context.close()
    assert not page_errors, page_errors


def _logged_in_page(browser: Any, errors: list[str], live_server: Any, user: Any) -> tuple[Any, Any]:
    from django.test import Client

    client = Client()
    client.force_login(user)
    context, page = _new_page(browser, errors)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    return context, page


@pytest.fixture
def page(browser: Any, page_errors: list[str], live_server: Any, make_member: Any) -> Iterator[Any]:
    """A fresh page logged in as a viewer of the test team; fails the test on any JavaScript or console error."""
    context, page = _logged_in_page(browser, page_errors, live_server, make_member("vera", "viewer"))
    yield page
    context.close()
    assert not page_errors, page_errors


@pytest.fixture
def analyst_page(browser: Any, page_errors: list[str], live_server: Any, make_member: Any) -> Iterator[Any]:
    """As ``page``, logged in as an analyst (who may ask traces and what-ifs)."""
    context, page = _logged_in_page(browser, page_errors, live_server, make_member("andy", "analyst"))
    yield page
    context.close()
    assert not page_errors, page_errors


def post_json(url: str, body: Any, token: str) -> Any:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def get_json(url: str, token: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.fixture
def reader_token(make_member: Any) -> str:
    """A personal API token of a viewer of the test team, to compare the page with the API."""
    from lineage_server.accounts.services import create_personal_token

    return create_personal_token(make_member("rita", "viewer"), "browser test")[1]


@pytest.fixture
def seeded_app(live_server: Any, agent_token: str) -> str:
    """A word count that read one file and wrote another, posted as an agent would."""
    token = agent_token
    events = word_count_with_join("local-1763731200000")
    events.append(
        event(
            "dataset_io",
            "local-1763731200000",
            29,
            path="file:/data/out/counts",
            direction="written",
            format="text",
            size_bytes=4096,
            job_id=0,
            rdd_id=4,
        )
    )
    answer = post_json(f"{live_server.url}/api/v1/ingest/events/", {"events": events}, token)
    assert answer["accepted"] == len(events)
    return "local-1763731200000"


def graph_point(page: Any, script: str) -> dict[str, float]:
    """The page coordinates of the point ``script`` (a JS function of ``cy`` returning a rendered
    position) names in ``window.lineageGraph``."""
    return page.evaluate(
        f"""() => {{
            const cy = window.lineageGraph;
            const box = cy.container().getBoundingClientRect();
            const p = ({script})(cy);
            return {{x: box.left + p.x, y: box.top + p.y}};
        }}"""
    )


def node_point(page: Any, node_id: str) -> dict[str, float]:
    """Where node ``node_id`` is on the page, first panned into the view's centre if outside it."""
    return graph_point(
        page,
        f"""(cy) => {{
            const node = cy.getElementById({json.dumps(node_id)});
            const p = node.renderedPosition();
            if (p.x < 0 || p.y < 0 || p.x > cy.width() || p.y > cy.height()) cy.center(node);
            return node.renderedPosition();
        }}""",
    )


def click_node(page: Any, node_id: str, *, double: bool = False, add: bool = False) -> None:
    """Click (or double-click) a node of the graph with the mouse; ``add``: Shift-click (adds it to
    the selection)."""
    point = node_point(page, node_id)
    if add:
        page.keyboard.down("Shift")
    (page.mouse.dblclick if double else page.mouse.click)(point["x"], point["y"])
    if add:
        page.keyboard.up("Shift")
