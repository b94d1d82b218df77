"""End to end in chromium: seed an application through the ingest API, browse the list and its graph."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.browser.conftest import SCREENSHOT_DIR, click_node, get_json, graph_point, post_json
from tests.lineage_server.events import capture_point, event, operator, stage_run, word_count_with_join

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Screenshots to look at after a run (in SCREENSHOT_DIR): app_page.png, app_page_stages.png,
# app_page_application.png and app_page_skipped.png.


SKIPPED_APP = "local-1763731300000"


@pytest.fixture
def app_with_skipped_stage(live_server: Any, agent_token: str) -> str:
    """The word count plus a second job whose map side (stage 2) Spark skipped, reusing stage 0's shuffle."""
    from lineage_server.catalog.models import Application
    from lineage_server.catalog.services import finalize_application

    token = agent_token
    events = word_count_with_join(SKIPPED_APP)
    end = events.pop()  # application_end goes last
    events += [
        event("job_start", SKIPPED_APP, 40, job_id=1, stage_ids=[2, 3], call_site="count at wc.py:10"),
        *stage_run(
            SKIPPED_APP,
            41,
            45,
            stage_id=3,
            name="count at wc.py:10",
            parent_stage_ids=[2],
            job_id=1,
            operators=[operator(3, "ShuffledRDD", [2], "reduceByKey"), operator(5, "PythonRDD", [3], "count")],
            metrics={"tasks": 2, "shuffle_read_bytes": 300},
        ),
        # Attached to the job's last stage that ran (no RDD named): stage 3 as a whole.
        event("dataset_io", SKIPPED_APP, 45, path="file:/data/out/total", direction="written", format="text", job_id=1),
        event("job_end", SKIPPED_APP, 46, job_id=1, status="succeeded"),
        end,
    ]
    answer = post_json(f"{live_server.url}/api/v1/ingest/events/", {"events": events}, token)
    assert answer["accepted"] == len(events)
    # What the Celery worker does once an application has ended: stage 2, never submitted, is skipped.
    finalize_application(Application.objects.get(app_id=SKIPPED_APP).pk)
    return SKIPPED_APP


def _wait_for_graph(page: Any) -> None:
    page.wait_for_selector("#application-page[data-state='ready']")
    page.wait_for_function("window.lineageGraph && window.lineageGraph.nodes().length > 0")
    _wait_for_animations(page)


def _wait_for_animations(page: Any) -> None:
    """Wait until the layout (re)run by a collapse or expand and the view's move after it are done."""
    page.wait_for_selector("#application-page[data-layout='idle']", state="attached")
    page.wait_for_function("!window.lineageGraph.animated() && !window.lineageGraph.nodes().some((n) => n.animated())")


def _click_stage_title(page: Any, stage_id: str) -> None:
    # A stage's title is drawn above its box; clicking it selects the stage, not an operator inside.
    point = graph_point(
        page,
        f"""(cy) => {{
            const stage = cy.getElementById({json.dumps(stage_id)});
            const withLabel = stage.renderedBoundingBox({{includeLabels: true}});
            const box = stage.renderedBoundingBox({{includeLabels: false}});
            return {{x: (box.x1 + box.x2) / 2, y: (withLabel.y1 + box.y1) / 2}};
        }}""",
    )
    page.mouse.click(point["x"], point["y"])


def _zoom_state(page: Any) -> dict[str, Any]:
    return page.evaluate("() => ({level: window.lineageZoom.level(), collapsed: window.lineageZoom.collapsed()})")


def _counts(page: Any) -> dict[str, int]:
    return page.evaluate(
        """() => {
            const cy = window.lineageGraph;
            return {stage: cy.nodes('.stage').length, operator: cy.nodes('.operator').length,
                    dataset: cy.nodes('.dataset').length};
        }"""
    )


def test_applications_list_shows_the_seeded_app_and_links_to_its_graph(live_server, seeded_app, page):
    page.goto(f"{live_server.url}/applications/")
    page.wait_for_selector("#applications-page[data-state='ready']")
    row = page.locator(f"tr[data-app-id='{seeded_app}']")
    assert row.count() == 1
    assert "wc" in row.inner_text() and "succeeded" in row.inner_text()
    assert "Showing 1–1 of 1" in page.inner_text(".summary")

    page.select_option("select[name='status']", "failed")
    page.wait_for_selector("#applications-page[data-state='ready'] tr.empty")
    assert "status=failed" in page.url
    page.go_back()
    page.wait_for_selector(f"tr[data-app-id='{seeded_app}']")

    row.locator("a").click()
    page.wait_for_url(f"**/applications/{seeded_app}/")
    _wait_for_graph(page)


def test_application_graph_collapses_and_expands_stages_and_shows_details(live_server, seeded_app, page, reader_token):
    api = get_json(f"{live_server.url}/api/v1/applications/{seeded_app}/graph/", reader_token)
    expected = {kind: sum(1 for n in api["nodes"] if n["kind"] == kind) for kind in ("stage", "operator", "dataset")}
    assert expected == {"stage": 2, "operator": 5, "dataset": 2}

    page.goto(f"{live_server.url}/applications/{seeded_app}/")
    _wait_for_graph(page)
    assert _counts(page) == expected
    assert page.evaluate("window.lineageGraph.edges().length") == len(api["edges"])
    assert "2 stages · 5 operators · 2 datasets" in page.inner_text(".graph-status")
    assert page.is_disabled("#show-skipped"), "nothing to show: the application has no skipped stage"

    # The DAG flows left to right: input dataset, stage 0, stage 1, output dataset.
    xs = page.evaluate(
        """() => Object.fromEntries(window.lineageGraph.nodes().map((n) => [n.id(), n.position('x')]))"""
    )
    datasets = sorted((n for n in api["nodes"] if n["kind"] == "dataset"), key=lambda n: n["data"]["directions"])
    read, written = datasets[0]["id"], datasets[1]["id"]
    assert xs[read] < xs["stage:0"] < xs["stage:1"] < xs[written]

    # The minimap draws the whole graph once it is on screen.
    page.wait_for_function("(document.querySelector('#minimap img')?.src ?? '').startsWith('data:image/png')")

    # A graph this small opens at its deepest level, its jobs and stages as boxes around operators.
    assert _zoom_state(page) == {"level": "operator", "collapsed": []}
    assert page.get_attribute("#level-operator", "aria-pressed") == "true"
    assert page.is_disabled("#level-capture"), "no capture point was reported"
    assert "level=operator" in page.url
    assert page.evaluate("window.lineageGraph.getElementById('job:0').children().map((n) => n.id()).sort()") == [
        "stage:0", "stage:1"]

    # Select stage 0 by its title, then zoom out of it (collapse it) from the side panel.
    _click_stage_title(page, "stage:0")
    page.wait_for_selector("#details[data-node-id='stage:0']")
    assert page.locator("#details .section-metrics").count() == 1
    assert "Executor run time" in page.inner_text("#details")
    page.click("#details button.zoom-out")
    page.wait_for_function("window.lineageGraph.getElementById('stage:0').hasClass('collapsed')")
    _wait_for_animations(page)
    state = page.evaluate(
        """() => {
            const cy = window.lineageGraph;
            const stage = cy.getElementById('stage:0');
            return {isParent: stage.isParent(), visible: stage.visible(),
                    operators: cy.nodes('.operator').map((n) => n.id()).sort(), label: stage.data('label')};
        }"""
    )
    assert state == {"isParent": False, "visible": True, "operators": ["op:1:3", "op:1:4"],
                     "label": "Stage 0: reduceByKey at wc.py:8\n2 tasks · 40 ms\n+ 3 operators"}
    assert "out=stage%3A0" in page.url, "the page's state is in its URL"
    # The collapsed stage keeps the stage's inputs and outputs.
    neighbours = page.evaluate(
        "() => window.lineageGraph.getElementById('stage:0').connectedEdges().connectedNodes().map((n) => n.id())"
    )
    assert read in neighbours and "op:1:3" in neighbours
    assert "Zoom in" in page.inner_text("#details button.zoom-node")
    assert page.locator("#details .section-holds").count() == 1

    # Zoom back in from the panel: exactly the graph we had.
    page.click("#details button.zoom-in")
    page.wait_for_function("window.lineageGraph.getElementById('stage:0').isParent()")
    _wait_for_animations(page)
    assert _counts(page) == expected
    children = page.evaluate("() => window.lineageGraph.getElementById('stage:0').children().map((n) => n.id()).sort()")
    assert children == ["op:0:0", "op:0:1", "op:0:2"]
    assert page.evaluate("window.lineageGraph.edges().length") == len(api["edges"])

    # Double-clicking an operator collapses its stage; double-clicking the stage opens it again.
    click_node(page, "op:1:4", double=True)
    page.wait_for_function("window.lineageGraph.getElementById('stage:1').hasClass('collapsed')")
    _wait_for_animations(page)
    assert _counts(page) == {**expected, "operator": 3}
    click_node(page, "stage:1", double=True)
    page.wait_for_function("window.lineageGraph.getElementById('stage:1').isParent()")
    _wait_for_animations(page)
    assert _counts(page) == expected

    # Whole levels from the toolbar: stages, jobs, the application, and back to operators.
    page.click("#level-stage")
    page.wait_for_function("window.lineageGraph.nodes('.operator').length === 0")
    assert _counts(page) == {**expected, "operator": 0}
    _wait_for_animations(page)
    assert page.get_attribute("#level-stage", "aria-pressed") == "true"
    page.screenshot(path=SCREENSHOT_DIR / "app_page_stages.png")
    # Zooming into one stage lays out only what it holds, where it was; the rest moves aside and
    # nothing overlaps. Zooming out again draws the stages exactly as before. (The page loaded
    # afresh: it keeps the layouts of the states it drew, and it drew this one above.)
    page.goto(page.url)
    _wait_for_graph(page)
    before = page.evaluate(POSITIONS)
    click_node(page, "stage:1", double=True)
    page.wait_for_function("window.lineageGraph.getElementById('stage:1').isParent()")
    _wait_for_animations(page)
    assert page.evaluate("window.lineageZoom.lastDraw().how") == "in place"
    assert page.evaluate(OVERLAPS) == []
    page.screenshot(path=SCREENSHOT_DIR / "app_page_stage_zoomed.png")
    click_node(page, "op:1:4", double=True)
    page.wait_for_function("window.lineageGraph.getElementById('stage:1').hasClass('collapsed')")
    _wait_for_animations(page)
    assert page.evaluate("window.lineageZoom.lastDraw().how") == "kept"
    assert page.evaluate(POSITIONS) == before
    # A selection zooms at once: Shift-click both stages, "Zoom in selected" opens both; an
    # operator and a stage selected, "Zoom out selected" collapses both stages again.
    assert page.is_disabled("#zoom-selected-in")
    click_node(page, "stage:0")
    click_node(page, "stage:1", add=True)
    assert page.evaluate("window.lineageGraph.nodes(':selected').map((n) => n.id()).sort()") == ["stage:0", "stage:1"]
    page.click("#zoom-selected-in")
    page.wait_for_function("['stage:0', 'stage:1'].every((id) => window.lineageGraph.getElementById(id).isParent())")
    _wait_for_animations(page)
    assert page.evaluate(OVERLAPS) == []
    click_node(page, "op:0:1")
    click_node(page, "op:1:4", add=True)
    page.click("#zoom-selected-out")
    page.wait_for_function("window.lineageGraph.nodes('.operator').length === 0")
    assert page.evaluate(POSITIONS) == before
    page.click("#level-job")
    page.wait_for_function("window.lineageGraph.nodes('.stage').length === 0")
    assert page.evaluate("window.lineageGraph.getElementById('job:0').hasClass('collapsed')")
    page.click("#level-application")
    page.wait_for_function("window.lineageGraph.nodes().length === 3")
    assert sorted(_ids(page, "edge")) == sorted([f"zoom:{read}->application", f"zoom:application->{written}"])
    page.screenshot(path=SCREENSHOT_DIR / "app_page_application.png")
    # The URL alone brings the same view back (a permalink).
    page.goto(page.url)
    _wait_for_graph(page)
    assert _zoom_state(page) == {"level": "application", "collapsed": ["application"]}
    page.click("#level-operator")
    page.wait_for_function(f"window.lineageGraph.nodes('.operator').length === {expected['operator']}")
    _wait_for_animations(page)

    # By keyboard: type a node's name in the finder, Enter selects it and opens its panel.
    page.focus("#find-node")
    page.keyboard.type("Stage 1: collect")
    page.keyboard.press("Enter")
    page.wait_for_selector("#details[data-node-id='stage:1']")
    assert page.evaluate("window.lineageGraph.getElementById('stage:1').selected()")
    assert page.evaluate("document.activeElement.closest('#details') !== null"), "focus moves to the panel"

    # Click an operator: the panel shows its Python operators and call site.
    click_node(page, "op:0:2")
    page.wait_for_selector("#details[data-node-id='op:0:2']")
    details = page.inner_text("#details")
    assert page.locator("#details .section-python-operators").count() == 1
    assert "flatMap" in details and "wc.py:7" in details

    # Click a dataset: the panel shows its path and size.
    click_node(page, read)
    page.wait_for_selector(f"#details[data-node-id='{read}']")
    details = page.inner_text("#details")
    assert "file:/data/in.txt" in details and "1.2 KiB" in details
    page.screenshot(path=SCREENSHOT_DIR / "app_page.png")


POSITIONS = "() => Object.fromEntries(window.lineageGraph.nodes().map((n) => [n.id(), n.position()]))"
# Pairs of drawn leaves whose boxes overlap.
OVERLAPS = """() => {
    const boxes = window.lineageGraph.nodes().filter((n) => !n.isParent())
        .map((n) => ({id: n.id(), ...n.boundingBox({includeLabels: false})}));
    return boxes.flatMap((a, i) => boxes.slice(i + 1)
        .filter((b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2).map((b) => [a.id, b.id]));
}"""


def _ids(page: Any, selector: str) -> list[str]:
    return page.evaluate(f"() => window.lineageGraph.elements({json.dumps(selector)}).map((e) => e.id()).sort()")


def _all_in_view(page: Any) -> bool:
    """Whether every element is drawn inside the graph's container (nothing to scroll or pan to)."""
    return page.evaluate(
        """() => {
            const cy = window.lineageGraph;
            const box = cy.elements().renderedBoundingBox();
            return box.x1 >= 0 && box.y1 >= 0 && box.x2 <= cy.width() && box.y2 <= cy.height();
        }"""
    )


def test_skipped_stages_are_hidden_until_asked_for(live_server, app_with_skipped_stage, page, reader_token):
    app_id = app_with_skipped_stage
    api = get_json(f"{live_server.url}/api/v1/applications/{app_id}/graph/", reader_token)
    skipped = [n["id"] for n in api["nodes"] if n["kind"] == "stage" and n["data"]["status"] == "skipped"]
    assert skipped == ["stage:2"]
    touching = sorted(e["id"] for e in api["edges"] if e["source"] in skipped or e["target"] in skipped)
    assert touching == ["stage:2->stage:3"]
    nodes = sorted(n["id"] for n in api["nodes"])
    edges = sorted(e["id"] for e in api["edges"])

    page.goto(f"{live_server.url}/applications/{app_id}/")
    _wait_for_graph(page)
    # Hidden by default: the skipped stage and its edge, nothing else.
    assert not page.is_checked("#show-skipped") and page.is_enabled("#show-skipped")
    assert _ids(page, "node") == [n for n in nodes if n not in skipped]
    assert _ids(page, "edge") == [e for e in edges if e not in touching]
    assert "3 stages (1 skipped hidden) · 7 operators · 2 datasets" in page.inner_text(".graph-status")
    assert _all_in_view(page), "a graph this small is shown whole at first load"
    xs = page.evaluate("() => Object.fromEntries(window.lineageGraph.nodes().map((n) => [n.id(), n.position('x')]))")
    assert xs["op:0:2"] < xs["op:3:3"] < xs["op:3:5"], "stage 3 reads stage 0's shuffle, left to right"
    written = next(n["id"] for n in api["nodes"] if n["kind"] == "dataset" and n["data"]["directions"] == ["written"])
    assert f"stage:3->{written}" in edges
    right_of_stage = page.evaluate(
        f"""() => {{
            const cy = window.lineageGraph;
            return cy.getElementById({json.dumps(written)}).boundingBox().x1
                > cy.getElementById('stage:3').boundingBox({{includeLabels: false}}).x2;
        }}"""
    )
    assert right_of_stage, "what a whole stage wrote is drawn right of the stage"

    # Collapse stage 0 and select stage 3: both survive showing the skipped stage.
    # (Statements in a block: evaluate() would otherwise serialize the collection they return.)
    page.evaluate("() => { window.lineageZoom.zoomOut('stage:0'); }")
    _wait_for_animations(page)
    _click_stage_title(page, "stage:3")
    page.wait_for_selector("#details[data-node-id='stage:3']")

    page.check("#show-skipped")
    page.wait_for_function("window.lineageGraph.getElementById('stage:2').nonempty()")
    _wait_for_animations(page)
    assert page.evaluate("window.lineageGraph.getElementById('stage:2').hasClass('status-skipped')")
    assert "stage:2->stage:3" in _ids(page, "edge")
    assert "4 stages (1 skipped) · 7 operators · 2 datasets" in page.inner_text(".graph-status")
    assert page.evaluate("window.lineageGraph.getElementById('stage:0').hasClass('collapsed')")
    assert page.get_attribute("#details", "data-node-id") == "stage:3"
    assert _all_in_view(page), "the view is framed again after the new layout"
    page.screenshot(path=SCREENSHOT_DIR / "app_page_skipped.png")

    # Everything is back once stage 0 is expanded; unticking hides the skipped stage again.
    page.evaluate("() => { window.lineageZoom.zoomIn('stage:0'); }")
    _wait_for_animations(page)
    assert _ids(page, "node") == nodes and _ids(page, "edge") == edges
    page.uncheck("#show-skipped")
    page.wait_for_function("window.lineageGraph.getElementById('stage:2').empty()")
    _wait_for_animations(page)
    assert _ids(page, "node") == [n for n in nodes if n not in skipped]
    assert "3 stages (1 skipped hidden)" in page.inner_text(".graph-status")
    # The rebuilt graph answers clicks as before.
    _click_stage_title(page, "stage:0")
    page.wait_for_selector("#details[data-node-id='stage:0']")
    page.click("#details button.zoom-out")
    page.wait_for_function("window.lineageGraph.getElementById('stage:0').hasClass('collapsed')")
    _wait_for_animations(page)
    click_node(page, "op:3:5")
    page.wait_for_selector("#details[data-node-id='op:3:5']")


def test_unknown_application_page_is_a_404(live_server, page, page_errors):
    response = page.goto(f"{live_server.url}/applications/no-such-app/")
    assert response.status == 404
    assert "No such application" in page.inner_text("main")
    # Chromium logs the 404 document itself as a console error; nothing else may fail.
    page.wait_for_load_state("load")
    assert [e for e in page_errors if "status of 404" not in e] == []
    page_errors.clear()


INCOMPLETE_APP = "local-1763731400000"
DISK_FULL = "OSError: [Errno 28] No space left on device"


def test_incomplete_record_level_lineage_shows_a_banner(live_server, agent_token, seeded_app, page, reader_token):
    """An application whose agent could not write a lineage table says so above its graph, in words."""
    events = word_count_with_join(INCOMPLETE_APP)
    events += [
        capture_point(INCOMPLETE_APP, 35, "cp-map-0", kind="stage", stage_id=0),
        capture_point(
            INCOMPLETE_APP,
            36,
            "cp-reduce-1",
            kind="reducer",
            stage_id=1,
            missing=[{"partition": 1, "reason": DISK_FULL}],
        ),
    ]
    answer = post_json(f"{live_server.url}/api/v1/ingest/events/", {"events": events}, agent_token)
    assert answer["accepted"] == len(events)
    api = get_json(f"{live_server.url}/api/v1/applications/{INCOMPLETE_APP}/", reader_token)
    assert (api["lineage_complete"], api["missing_table_count"]) == (False, 1)

    page.goto(f"{live_server.url}/applications/{INCOMPLETE_APP}/")
    _wait_for_graph(page)
    banner = page.locator("#lineage-incomplete")
    assert banner.is_visible() and banner.get_attribute("role") == "alert"
    assert banner.inner_text().strip() == (
        f"⚠ Record-level lineage incomplete: 1 table of capture point cp-reduce-1 could not be written: {DISK_FULL}."
    )
    page.screenshot(path=SCREENSHOT_DIR / "app_page_incomplete.png")

    page.goto(f"{live_server.url}/applications/{seeded_app}/")
    _wait_for_graph(page)
    assert page.locator("#lineage-incomplete").count() == 0, "complete lineage shows no banner"


WIDE_APP = "local-1763731400000"


def _post_jobs(live_server: Any, agent_token: str, app_id: str, jobs: int, capture_job: int, stages: int = 3) -> str:
    """`jobs` jobs of `stages` chained stages of three operators; `capture_job` holds the capture points."""
    events = [event("application_start", app_id, 0, name="etl", user="ana", spark_version="4.3.0", master="local[2]")]
    t = 1
    for job in range(jobs):
        stage_ids = [job * stages + s for s in range(stages)]
        call_site = f"save at etl.py:{20 + job}"
        events.append(event("job_start", app_id, t, job_id=job, stage_ids=stage_ids, call_site=call_site))
        for s, stage in enumerate(stage_ids):
            rdds = [stage * 3 + o for o in range(3)]
            events += stage_run(
                app_id, t + 1, t + 2, stage_id=stage, name=f"reduceByKey at etl.py:{20 + job}",
                parent_stage_ids=[stage - 1] if s else [], job_id=job,
                operators=[operator(rdd, "PythonRDD", [rdd - 1] if rdd % 3 or s else [], "map") for rdd in rdds],
                metrics={"tasks": 2, "executor_run_time_ms": 40},
            )
            if job == capture_job:
                events.append(capture_point(app_id, t + 2, f"{app_id}/{stage:04d}-stage-map", stage_id=stage,
                                            rdd_id=rdds[-1]))
            t += 3
        events.append(event("job_end", app_id, t, job_id=job, status="succeeded"))
        t += 1
    events.append(event("application_end", app_id, t + 1))
    for start in range(0, len(events), 500):
        batch = events[start:start + 500]
        answer = post_json(f"{live_server.url}/api/v1/ingest/events/", {"events": batch}, agent_token)
        assert answer["accepted"] == len(batch)
    return app_id


@pytest.fixture
def app_of_eight_jobs(live_server: Any, agent_token: str) -> str:
    """Eight jobs of three chained stages of three operators; job 5 holds the capture points."""
    return _post_jobs(live_server, agent_token, WIDE_APP, jobs=8, capture_job=5)


BIG_APP = "local-1763731600000"


@pytest.fixture
def app_of_twenty_jobs(live_server: Any, agent_token: str) -> str:
    """Twenty jobs of three stages: 60 stages, more than 1280x800 reads at once (54); job 12 has the capture points."""
    return _post_jobs(live_server, agent_token, BIG_APP, jobs=20, capture_job=12)


MANY_JOBS_APP = "local-1763731700000"


@pytest.fixture
def app_of_300_jobs(live_server: Any, agent_token: str) -> str:
    """300 jobs of one stage of three operators (bench/browser_graph.py's "many" shape, smaller); job
    200 holds the capture points."""
    return _post_jobs(live_server, agent_token, MANY_JOBS_APP, jobs=300, capture_job=200, stages=1)


def _open_at_1280(page: Any, url: str, screenshot: str) -> None:
    """The page as a newcomer's laptop shows it (1280x800), screenshot taken once drawn."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(url)
    _wait_for_graph(page)
    page.screenshot(path=SCREENSHOT_DIR / screenshot)


def _opening_view(page: Any) -> dict[str, Any]:
    """What the opened page shows: the stages' labels' size on screen (px), the stages drawn and those
    inside the view, whether every node is, and how many jobs are drawn collapsed."""
    return page.evaluate(
        """() => {
            const cy = window.lineageGraph;
            const onScreen = (n) => {
                const b = n.renderedBoundingBox({includeLabels: false});
                return b.x1 >= 0 && b.y1 >= 0 && b.x2 <= cy.width() && b.y2 <= cy.height();
            };
            return {
                font: cy.zoom() * parseFloat(cy.nodes('.stage').first().style('font-size')),
                stages: cy.nodes('.stage').map((n) => n.id()).sort(),
                shown: cy.nodes('.stage').filter(onScreen).map((n) => n.id()).sort(),
                whole: cy.nodes().filter(onScreen).length === cy.nodes().length,
                collapsedJobs: cy.nodes('.job.collapsed').length,
            };
        }"""
    )


def test_a_big_application_opens_readable_on_the_job_holding_its_capture_points(live_server, app_of_eight_jobs, page):
    _open_at_1280(page, f"{live_server.url}/applications/{app_of_eight_jobs}/", "app_page_opening.png")
    assert _zoom_state(page)["level"] == "stage"
    view = _opening_view(page)
    assert not view["whole"], "eight jobs do not fit at a readable zoom"
    assert view["font"] >= 8, f"labels drawn at {view['font']} px"
    assert {"stage:15", "stage:16", "stage:17"} <= set(view["shown"]), view["shown"]
    assert not {"stage:0", "stage:23"} & set(view["shown"]), "framed on job 5, not the whole or a corner"


def test_an_application_too_big_to_read_at_its_stages_opens_on_its_job_the_other_jobs_collapsed(
    live_server, app_of_twenty_jobs, page
):
    """Its 60 stages are more than the view reads (framing.readableNodeCount): only the stages of
    the job holding the capture points are drawn, readable and on screen; ZoomIn on another job
    shows that job's stages."""
    _open_at_1280(page, f"{live_server.url}/applications/{app_of_twenty_jobs}/", "app_page_big_opening.png")
    assert _zoom_state(page)["level"] == "stage"
    view = _opening_view(page)
    assert view["stages"] == ["stage:36", "stage:37", "stage:38"], "only job 12's stages are drawn"
    assert view["shown"] == view["stages"], "and all three are on screen"
    assert view["font"] >= 8, f"labels drawn at {view['font']} px"
    assert view["collapsedJobs"] == 19
    page.evaluate("window.lineageZoom.zoomIn('job:3')")
    _wait_for_animations(page)
    opened = page.evaluate("window.lineageGraph.nodes('.stage').filter((n) => n.data('parent') === 'job:3')"
                           ".map((n) => [n.id(), n.hasClass('collapsed')])")
    assert sorted(opened) == [["stage:10", True], ["stage:11", True], ["stage:9", True]], "its stages, not operators"


def test_an_application_of_300_jobs_opens_on_the_nodes_nearest_its_capture_points_and_draws_the_rest_on_asking(
    live_server, app_of_300_jobs, page
):
    """Even collapsed, its 300 jobs are more than the view reads: the page draws only the nodes
    nearest the job holding the capture points (neighbourhood.js), readable and framed on it, and
    says how to draw the rest; the Jobs level draws them all."""
    _open_at_1280(page, f"{live_server.url}/applications/{app_of_300_jobs}/", "app_page_many_jobs.png")
    assert _zoom_state(page)["level"] == "stage"
    view = _opening_view(page)
    assert view["stages"] == ["stage:200"], "the stage of job 200, which holds the capture points"
    assert view["shown"] == ["stage:200"], "on screen"
    assert view["font"] >= 8, f"labels drawn at {view['font']} px"
    drawn = page.evaluate("""() => {
        const cy = window.lineageGraph;
        const onScreen = (n) => {
            const b = n.renderedBoundingBox({includeLabels: false});
            return b.x1 >= 0 && b.y1 >= 0 && b.x2 <= cy.width() && b.y2 <= cy.height();
        };
        const jobs = cy.nodes('.job.collapsed');
        return {jobs: jobs.map((n) => n.id()), shown: jobs.filter(onScreen).map((n) => n.id())};
    }""")
    assert 10 < len(drawn["jobs"]) < 120, f"{len(drawn['jobs'])} jobs drawn of 299"
    assert {"job:199", "job:201"} <= set(drawn["jobs"]), "its neighbours, collapsed"
    assert "job:0" not in drawn["jobs"] and "job:299" not in drawn["jobs"], "not the far ends"
    assert {"job:199", "job:201"} & set(drawn["shown"]), "a neighbour on screen beside it"
    status = page.text_content(".graph-status")
    assert "of 300 nodes drawn, those nearest Job 200" in status, status
    page.click("#level-job")
    _wait_for_animations(page)
    assert page.evaluate("window.lineageGraph.nodes('.job').length") == 300, "the Jobs level draws every job"
    assert "nodes drawn" not in page.text_content(".graph-status")


LONG_APP = "local-1763731800000"


def test_a_job_of_150_stages_opens_on_the_stages_nearest_its_outputs_and_so_again_when_reloaded(
    live_server, agent_token, page
):
    """One job of 150 stages: more than the view reads, so the page draws the stages nearest what
    matters; the address it writes (?level=stage) opens the same way when reloaded, not as a
    drawing of every stage (what the Stages button asks for)."""
    app = _post_jobs(live_server, agent_token, LONG_APP, jobs=1, capture_job=0, stages=150)
    _open_at_1280(page, f"{live_server.url}/applications/{app}/", "app_page_long_job.png")
    assert "level=stage" in page.url
    opened = sorted(page.evaluate("window.lineageGraph.nodes('.stage').map((n) => n.id())"))
    assert 10 < len(opened) < 150, f"{len(opened)} stages drawn of 150"
    assert "90 of 150 nodes drawn" in page.text_content(".graph-status"), page.text_content(".graph-status")
    page.reload()
    _wait_for_graph(page)
    assert sorted(page.evaluate("window.lineageGraph.nodes('.stage').map((n) => n.id())")) == opened
    assert "90 of 150 nodes drawn" in page.text_content(".graph-status")
    page.click("#level-stage")
    _wait_for_animations(page)
    assert page.evaluate("window.lineageGraph.nodes('.stage').length") == 150, "the Stages level draws them all"


def test_a_small_application_opens_whole_at_its_deepest_readable_level(live_server, seeded_app, page):
    _open_at_1280(page, f"{live_server.url}/applications/{seeded_app}/", "app_page_small_opening.png")
    # its operators are too wide for the 870 px beside the panel (at 1500 px they fit: the test above)
    assert _zoom_state(page)["level"] == "stage"
    assert _all_in_view(page)
    assert page.evaluate("window.lineageGraph.zoom()") >= 0.7
    # one request for the graph: the page's preload, which its script's fetch took over
    asked = page.evaluate("performance.getEntriesByType('resource').filter((e) => e.name.includes('/graph/'))"
                          ".map((e) => e.initiatorType)")
    assert asked == ["link"]


NOT_CAPTURED_APP = "local-1763731500000"
REFUSED = "DataFrame.collect ran plain: record-level lineage capture does not support FlatMapGroupsInPandas()"


def test_an_output_that_was_not_captured_says_so_and_why(live_server, agent_token, page):
    """An action that ran plain (its query refused by the capture) is a capture point titled 'not
    captured', whose panel gives the operator that stopped it."""
    events = word_count_with_join(NOT_CAPTURED_APP)
    events += [
        capture_point(NOT_CAPTURED_APP, 35, "run/0001-output-collect-not-captured", kind="output", stage_id=1,
                      rows=0, bytes=0, not_captured=REFUSED),
    ]
    answer = post_json(f"{live_server.url}/api/v1/ingest/events/", {"events": events}, agent_token)
    assert answer["accepted"] == len(events)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/applications/{NOT_CAPTURED_APP}/?level=capture")
    _wait_for_graph(page)
    node = "capture:run/0001-output-collect-not-captured"
    assert page.evaluate(f"window.lineageGraph.getElementById({json.dumps(node)}).length") == 1
    click_node(page, node)
    page.wait_for_selector(f"#details[data-node-id={json.dumps(node)}]")
    details = page.inner_text("#details")
    assert "not captured (the action ran without record lineage)" in details and REFUSED in details, details
    assert page.locator("#ask-backward").count() == 0, "no trace offered from an output with no lineage"
    page.screenshot(path=SCREENSHOT_DIR / "app_page_not_captured.png")


def test_a_graph_laid_out_before_opens_where_it_was_without_laying_it_out(live_server, app_of_eight_jobs, page):
    """The second visit in the same browser takes the positions and boxes kept at the first
    (layout_cache.js): the same drawing and the same view, dagre not run again."""
    url = f"{live_server.url}/applications/{app_of_eight_jobs}/"
    snapshot = """() => {
        const cy = window.lineageGraph;
        return {how: window.lineageZoom.lastDraw().how, zoom: cy.zoom(), pan: cy.pan(),
                positions: Object.fromEntries(cy.nodes().filter((n) => !n.isParent())
                                              .map((n) => [n.id(), n.position()]))};
    }"""
    _open_at_1280(page, url, "app_page_opening.png")
    first = page.evaluate(snapshot)
    assert first["how"] in ("compound", "flat")
    _open_at_1280(page, url, "app_page_reopened.png")
    again = page.evaluate(snapshot)
    assert again["how"] == "stored"
    assert again["positions"].keys() == first["positions"].keys()
    for node, where in first["positions"].items():
        assert again["positions"][node] == pytest.approx(where, abs=0.1), node
    assert again["zoom"] == pytest.approx(first["zoom"]) and again["pan"] == pytest.approx(first["pan"], abs=0.5)
    page.evaluate("localStorage.clear()")
    _open_at_1280(page, url, "app_page_opening.png")
    assert page.evaluate("window.lineageZoom.lastDraw().how") == first["how"], "laid out again once forgotten"
