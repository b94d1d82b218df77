"""End to end in chromium: the pipeline page's column mode over our agent's and an OpenLineage run's lineage."""

from __future__ import annotations

import csv
import io
import json
import urllib.request
from typing import Any

import pytest

from tests.browser.conftest import SCREENSHOT_DIR, click_node, graph_point, post_json
from tests.lineage_server.column_events import REPORT_RUN, agent_events, openlineage_report_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KIND_RGB = {"TRANSFORMATION": "rgb(123,94,167)", "AGGREGATION": "rgb(208,106,18)", "IDENTITY": "rgb(47,127,209)",
            "FILTER": "rgb(192,57,43)"}


@pytest.fixture
def column_pipeline(live_server: Any, agent_token: str) -> int:
    """raw -> clean -> daily (our agent) -> report (the OpenLineage client's run); the pk of clean."""
    from lineage_server.catalog.models import Dataset

    events = agent_events()
    assert post_json(f"{live_server.url}/api/v1/ingest/events/", {"events": events}, agent_token)["accepted"] == 6
    request = urllib.request.Request(f"{live_server.url}/api/v1/lineage", data=openlineage_report_event().encode(),
                                     headers={"Content-Type": "application/json",
                                              "Authorization": f"Bearer {agent_token}"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status in (200, 201)
    return int(Dataset.objects.get(path="file:/clean").pk)


def _ready(page: Any) -> None:
    page.wait_for_selector("#pipeline-page[data-state='ready'][data-layout='idle']", state="attached")


def _columns(page: Any, selector: str = "node.column") -> list[str]:
    return sorted(page.evaluate(
        f"() => window.lineageGraph.nodes({json.dumps(selector)}).map((n) => n.parent().data('title').slice(5)"
        " + '.' + n.data('label'))"))


def test_column_mode_draws_highlights_and_downloads_a_columns_impact(live_server, column_pipeline, page):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/datasets/{column_pipeline}/?upstream=2&downstream=2")
    _ready(page)
    page.select_option("#mode", "columns")
    page.wait_for_selector("#pipeline-page[data-mode='columns'][data-state='ready'][data-layout='idle']",
                           state="attached")
    # every column of clean, what they come from and what is written from them, inside their datasets
    assert _columns(page) == ["/clean.id", "/clean.total", "/daily.n", "/daily.sum", "/raw.amount", "/raw.id",
                              "/raw.name", "/report.daily_total"]
    assert page.evaluate("() => window.lineageGraph.nodes('.dataset-box').every((n) => n.isParent())")
    colours = page.evaluate(
        "() => Object.fromEntries(window.lineageGraph.edges().map((e) => [e.data('kind'),"
        " e.style('line-color').replace(/ /g, '')]))")
    assert {kind: colours[kind] for kind in KIND_RGB} == KIND_RGB
    assert "8 columns of 4 datasets" in page.inner_text(".graph-status")
    x = page.evaluate("() => Object.fromEntries(window.lineageGraph.nodes('.dataset-box').map((n) =>"
                      " [n.data('title'), n.position('x')]))")
    assert x["file:/raw"] < x["file:/clean"] < x["file:/daily"] < x["file:/report"], "data flows left to right"
    assert "mode=columns" in page.url

    # picking clean.total: one edge each way, then two
    page.fill("#reach-depth", "1")
    page.dispatch_event("#reach-depth", "change")
    click_node(page, f"column:{column_pipeline}:total")
    page.wait_for_selector(f"#details[data-node-id='column:{column_pipeline}:total']")
    assert _columns(page, ".upstream") == ["/raw.amount", "/raw.name"]
    assert _columns(page, ".downstream") == ["/daily.sum"]
    page.fill("#reach-depth", "2")
    page.dispatch_event("#reach-depth", "change")
    page.wait_for_function("window.lineageGraph.nodes('.downstream').length === 2")
    assert _columns(page, ".downstream") == ["/daily.sum", "/report.daily_total"]
    assert "/clean.id" in _columns(page, ".faded")
    page.screenshot(path=SCREENSHOT_DIR / "pipeline_columns.png")

    # the link downloads (as the trace page's CSV test does, the file is fetched with the page's session)
    assert page.get_attribute("#impact-csv", "download") is not None
    answer = page.request.get(live_server.url + page.get_attribute("#impact-csv", "href"))
    assert answer.ok and answer.headers["content-disposition"].startswith("attachment")
    rows = list(csv.DictReader(io.StringIO(answer.text())))
    assert [(r["dataset"], r["column"], r["via"], r["applications"]) for r in rows] == [
        ("file:/daily", "sum", "AGGREGATION", "local-daily"),
        ("file:/report", "daily_total", "IDENTITY", f"openlineage-{REPORT_RUN}")]

    # back to datasets: the applications come back
    page.select_option("#mode", "datasets")
    page.wait_for_selector("#pipeline-page[data-mode='datasets'][data-state='ready']", state="attached")
    assert page.evaluate("() => window.lineageGraph.nodes('.app').length") >= 2


def test_a_column_graph_opened_from_its_url_is_fetched_once_by_the_pages_preload(live_server, column_pipeline, page):
    page.goto(f"{live_server.url}/datasets/{column_pipeline}/?mode=columns&upstream=1&downstream=1")
    page.wait_for_selector("#pipeline-page[data-mode='columns'][data-state='ready'][data-layout='idle']",
                           state="attached")
    assert _columns(page) == ["/clean.id", "/clean.total", "/daily.n", "/daily.sum", "/raw.amount", "/raw.id",
                              "/raw.name"]
    asked = page.evaluate("performance.getEntriesByType('resource').filter((e) => e.name.includes('/columns/'))"
                          ".map((e) => [new URL(e.name).search, e.initiatorType])")
    assert asked == [["?upstream=1&downstream=1", "link"]]


def _box_edge(page: Any, node_id: str) -> dict[str, float]:
    """A point inside a dataset's box above its first column (its own, not a column's, to click)."""
    return graph_point(page, f"""(cy) => {{
        const b = cy.getElementById({json.dumps(node_id)}).renderedBoundingBox({{includeLabels: false}});
        return {{x: (b.x1 + b.x2) / 2, y: b.y1 + 4}};
    }}""")


def _edges(page: Any) -> list[tuple[str, str, str]]:
    """The drawn edges as (source, target, kind), columns named dataset.column, datasets by path."""
    return sorted(tuple(e) for e in page.evaluate(
        """() => {
            const name = (n) => n.data('kind') === 'column'
                ? `${n.data('info').path.slice(5)}.${n.data('label')}` : n.data('title').slice(5);
            return window.lineageGraph.edges().map((e) => [name(e.source()), name(e.target()), e.data('kind')]);
        }"""))


def test_column_mode_collapses_and_expands_one_dataset(live_server, column_pipeline, page):
    from lineage_server.catalog.models import Dataset

    raw = f"dataset:{Dataset.objects.get(path='file:/raw').pk}"
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/datasets/{column_pipeline}/?upstream=2&downstream=2&mode=columns")
    page.wait_for_selector("#pipeline-page[data-mode='columns'][data-state='ready'][data-layout='idle']",
                           state="attached")
    expanded = _edges(page)
    assert ("/raw.amount", "/clean.total", "TRANSFORMATION") in expanded
    assert ("/raw.name", "/clean", "FILTER") in expanded

    # raw's panel collapses it: one node, its columns' edges now its own, every other dataset as it was
    point = _box_edge(page, raw)
    page.mouse.click(point["x"], point["y"])
    page.wait_for_selector(f"#details[data-node-id='{raw}'] #toggle-columns")
    page.click("#toggle-columns")
    _ready(page)
    page.wait_for_function(f"window.lineageGraph.getElementById('{raw}').hasClass('collapsed')")
    assert "/raw.amount" not in _columns(page) and "/clean.total" in _columns(page)
    assert page.evaluate(f"() => window.lineageGraph.getElementById('{raw}').data('label')") == "raw\n3 columns"
    collapsed = _edges(page)
    assert [e for e in collapsed if e[0] == "/raw"] == sorted(
        {("/raw", target, kind) for source, target, kind in expanded if source.startswith("/raw.")})
    assert [e for e in collapsed if not e[0].startswith("/raw")] == \
        [e for e in expanded if not e[0].startswith("/raw.")]
    assert "1 collapsed" in page.inner_text(".graph-status")
    assert page.inner_text("#toggle-columns") == "Show its 3 column(s)"
    page.screenshot(path=SCREENSHOT_DIR / "pipeline_columns_collapsed.png")

    # double-clicking it expands it again: the graph as it was drawn first
    point = graph_point(page, f"(cy) => cy.getElementById('{raw}').renderedPosition()")
    page.mouse.dblclick(point["x"], point["y"])
    page.wait_for_function(f"!window.lineageGraph.getElementById('{raw}').hasClass('collapsed')")
    _ready(page)
    assert _edges(page) == expanded
    assert "/raw.amount" in _columns(page)
    assert page.evaluate(f"() => window.lineageGraph.getElementById('{raw}').isParent()")
