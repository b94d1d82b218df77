"""End to end in chromium: follow a dataset through two applications on the dataset graph page."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.conftest import SCREENSHOT_DIR, click_node, post_json
from tests.lineage_server.events import event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REPORT_APP = "local-1763731400000"


@pytest.fixture
def two_apps(live_server: Any, agent_token: str, seeded_app: str) -> tuple[str, str]:
    """The word count (in.txt -> out/counts) and a report that reads its counts (-> report.csv)."""
    events = [
        event("application_start", REPORT_APP, 0, name="report", user="ana"),
        event("dataset_io", REPORT_APP, 1, path="file:/data/out/counts", direction="read", format="text", job_id=0),
        event("dataset_io", REPORT_APP, 2, path="file:/data/report.csv", direction="written", format="csv", job_id=0),
        event("application_end", REPORT_APP, 3),
    ]
    assert post_json(f"{live_server.url}/api/v1/ingest/events/", {"events": events}, agent_token)["accepted"] == 4
    return seeded_app, REPORT_APP


def _wait(page: Any) -> None:
    page.wait_for_selector("#pipeline-page[data-state='ready'][data-layout='idle']", state="attached")


def _labels(page: Any) -> list[str]:
    return page.evaluate("() => window.lineageGraph.nodes().map((n) => n.data('title')).sort()")


def _id_of(page: Any, title: str) -> str:
    return page.evaluate(f"window.lineageGraph.nodes().filter((n) => n.data('title') === {json.dumps(title)})[0].id()")


def test_follow_a_dataset_through_two_applications(live_server, two_apps, page):
    counts_app, report_app = two_apps
    # From the word count's graph: its output dataset, then "follow it across applications".
    page.goto(f"{live_server.url}/applications/{counts_app}/")
    page.wait_for_selector("#application-page[data-state='ready']")
    written = page.evaluate(
        "() => window.lineageGraph.nodes('.dataset-written').map((n) => n.id())[0]"
    )
    click_node(page, written)
    page.wait_for_selector(f"#details[data-node-id='{written}']")
    page.click("#details a.follow-dataset")
    page.wait_for_url(f"**/datasets/{written.split(':')[1]}/")
    _wait(page)
    # Two edges each way: the word count and its input upstream, the report and its output downstream.
    assert _labels(page) == ["file:/data/in.txt", "file:/data/out/counts", "file:/data/report.csv", "report", "wc"]
    x = page.evaluate(
        "() => Object.fromEntries(window.lineageGraph.nodes().map((n) => [n.data('title'), n.position('x')]))"
    )
    order = ["file:/data/in.txt", "wc", "file:/data/out/counts", "report", "file:/data/report.csv"]
    assert [x[title] for title in order] == sorted(x.values()), "data flows left to right"
    assert "3 datasets · 2 applications" in page.inner_text(".graph-status")
    centre = page.evaluate("() => window.lineageGraph.nodes('.center').map((n) => n.data('title'))")
    assert centre == ["file:/data/out/counts"]
    page.screenshot(path=SCREENSHOT_DIR / "pipeline_page.png")

    # The depth controls: nothing upstream, and the URL keeps the choice.
    page.fill("#upstream", "0")
    page.click("#apply-depth")
    page.wait_for_function("window.lineageGraph.nodes().length === 3")
    _wait(page)
    assert _labels(page) == ["file:/data/out/counts", "file:/data/report.csv", "report"]
    assert "upstream=0" in page.url
    page.reload()
    _wait(page)
    assert page.input_value("#upstream") == "0" and len(_labels(page)) == 3
    # A depth out of range is refused by the form, before any request.
    page.fill("#downstream", "11")
    page.click("#apply-depth")
    assert page.evaluate("!document.querySelector('#downstream').validity.valid")
    page.fill("#downstream", "2")

    # Expanding on demand: double-click the centre's reader... nothing new downstream of the report's
    # output, but the dataset's writer comes back when its neighbours are added.
    click_node(page, _id_of(page, "file:/data/out/counts"), double=True)
    page.wait_for_function("window.lineageGraph.nodes().length === 4")
    _wait(page)
    assert "wc" in _labels(page)
    assert page.evaluate("window.lineageGraph.nodes('.expanded').map((n) => n.data('title'))") == [
        "file:/data/out/counts"]

    # The report application: its panel links to its own lineage graph.
    click_node(page, _id_of(page, "report"))
    page.wait_for_selector(f"#details[data-node-id='app:{report_app}']")
    page.click("#details a.open-app")
    page.wait_for_url(f"**/applications/{report_app}/**")
    page.wait_for_selector("#application-page[data-state='ready']")
    # and from there, its datasets across applications, centred on it
    page.click("a.pipeline-link")
    page.wait_for_url(f"**/applications/{report_app}/pipeline/**")
    _wait(page)
    assert page.evaluate("() => window.lineageGraph.nodes('.center').map((n) => n.id())") == [f"app:{report_app}"]
    # two edges upstream reach the word count, not its input (three edges away)
    assert _labels(page) == ["file:/data/out/counts", "file:/data/report.csv", "report", "wc"]


def test_an_unknown_dataset_page_is_a_404(live_server, page, page_errors):
    response = page.goto(f"{live_server.url}/datasets/999999/")
    assert response is not None and response.status == 404
    assert "No such dataset" in page.inner_text("h1")
    # Chromium logs the 404 document itself as a console error; nothing else may fail.
    page.wait_for_load_state("load")
    assert [e for e in page_errors if "status of 404" not in e] == []
    page_errors.clear()
