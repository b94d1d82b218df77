"""End to end in chromium, with a real PySpark job captured record by record and a real Celery
worker: select an output on the application graph, trace it backward, watch it run, read its
records and subgraph, find it in the history by its permalink; run a what-if and read old and new
values. Each answer is checked against the job's input files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import SCREENSHOT_DIR, click_node
from tests.lineage_server.tracing.captured import TOPICS, CapturedJob, capture_word_topics, topic_totals
from tests.lineage_server.worker import celery_worker
from tests.spark_fixtures import spark

__all__ = ["spark"]

pytestmark = [pytest.mark.processes, pytest.mark.browser, pytest.mark.spark, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def captured(spark: Any, live_server: Any, agent_token: str, tmp_path: Path) -> CapturedJob:
    return capture_word_topics(spark, live_server.url, agent_token, tmp_path / "job")


def _select(page: Any, node_id: str) -> None:
    click_node(page, node_id)
    page.wait_for_selector(f"#details[data-node-id='{node_id}']")


def _open_capture_points(page: Any, url: str) -> list[dict[str, Any]]:
    """The application page at its capture-point level; returns its capture nodes' data."""
    page.goto(url)
    page.wait_for_selector("#application-page[data-state='ready']")
    page.click("#level-capture")
    page.wait_for_function("window.lineageZoom.level() === 'capture'")
    page.wait_for_selector("#application-page[data-layout='idle']", state="attached")
    return page.evaluate("() => window.lineageGraph.nodes('.capture').map((n) => ({id: n.id(), ...n.data('info')}))")


def _sample_texts(page: Any) -> list[str]:
    """The values of the node panel's "Sample records" table."""
    return page.eval_on_selector_all(".section-sample-records tbody tr td:nth-child(2)",
                                     "tds => tds.map(td => td.textContent)")


def _all_rows(page: Any) -> list[list[str]]:
    """Every row of the records table, page after page."""
    rows: list[list[str]] = []
    while True:
        rows += page.evaluate(
            "() => [...document.querySelectorAll('#records-table tbody tr')]"
            ".map((tr) => [...tr.cells].map((td) => td.textContent))"
        )
        if page.is_disabled(".records-controls button.next"):
            return rows
        before = page.get_attribute(".records-slot", "data-page")
        page.click(".records-controls button.next")
        page.wait_for_function(f"document.querySelector('.records-slot').dataset.page !== '{before}'")


def test_trace_and_what_if_from_the_graph(live_server, captured, analyst_page, tmp_path, settings):
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(tmp_path / "job" / "store")}  # where the job wrote
    page = analyst_page
    app_url = f"{live_server.url}/applications/{captured.app_id}/"
    log = tmp_path / "worker.log"
    with celery_worker(log, LINEAGE_TRACE_MODE="local", LINEAGE_TRACE_SPARK_AT_START="false"):
        points = _open_capture_points(page, app_url)
        output = next(p for p in points if p["capture_kind"] == "output")
        page.screenshot(path=SCREENSHOT_DIR / "trace_1_capture_points.png")

        # An input's panel shows its first lines as they are in the file; the output's its results.
        text_input = min((p for p in points if p["capture_kind"] == "input"), key=lambda p: p["capture_id"])
        _select(page, text_input["id"])
        page.wait_for_selector(".section-sample-records table")
        assert _sample_texts(page) == captured.lines[:10]
        # It is titled by the file it read, and its panel names the file (the API's `files`).
        assert [f.rsplit("/", 1)[-1] for f in text_input["files"]] == [captured.text.name]
        assert page.evaluate(f"window.lineageGraph.getElementById({json.dumps(text_input['id'])}).data('title')") \
            == f"textFile {captured.text.name}"
        assert captured.text.name in page.inner_text("#details .section-file-read")
        _select(page, output["id"])
        page.wait_for_selector(".section-sample-records table")
        page.screenshot(path=SCREENSHOT_DIR / "trace_1_output_sample.png")
        assert sorted(_sample_texts(page)) == sorted(repr(kv) for kv in captured.result.items())

        # Trace backward the output's records whose topic is "incident".
        page.click("#ask-backward")
        page.fill("#ask-field", "0")
        page.select_option("#ask-op", "equals")
        page.fill("#ask-value", "incident")
        page.fill("#ask-name", "where incidents come from")
        page.screenshot(path=SCREENSHOT_DIR / "trace_2_ask.png")
        page.click("#ask-submit")
        page.wait_for_url("**/traces/*/")
        trace_url = page.url
        page.screenshot(path=SCREENSHOT_DIR / "trace_3_progress.png")  # queued or running, or done already
        page.wait_for_selector("#question-page[data-status='succeeded'][data-state='ready']", timeout=240_000)
        page.screenshot(path=SCREENSHOT_DIR / "trace_4_answer.png", full_page=True)
        # At 1280x800 the graph opens on the path the trace took: every capture point it crossed
        # on screen, at a zoom where labels are drawn at 6 px or more (framing.PATH_MIN_ZOOM).
        page.set_viewport_size({"width": 1280, "height": 800})
        page.reload()
        page.wait_for_selector("#question-page[data-status='succeeded'][data-state='ready']")
        page.locator("#question-graph").scroll_into_view_if_needed()
        page.screenshot(path=SCREENSHOT_DIR / "trace_4_answer_1280.png")
        view = page.evaluate(
            """() => {
                const cy = window.lineageGraph;
                const off = cy.nodes('.crossed').filter((n) => {
                    const b = n.renderedBoundingBox({includeLabels: false});
                    return b.x1 < 0 || b.y1 < 0 || b.x2 > cy.width() || b.y2 > cy.height();
                });
                const unnoted = cy.nodes('.crossed').filter((n) => !/\\d+ records?/.test(n.data('label')));
                return {zoom: cy.zoom(), crossed: cy.nodes('.crossed').length, off: off.map((n) => n.id()),
                        unnoted: unnoted.map((n) => n.id())};
            }"""
        )
        assert view["crossed"] >= 3 and view["off"] == [], view
        assert view["unnoted"] == [], "each crossed point says how many of its records the trace holds"
        assert view["zoom"] >= 0.5, view
        page.set_viewport_size({"width": 1500, "height": 900})

        # Its records are the lines holding an incident word and the topic lines of "incident".
        expected = sorted(captured.lines_with(captured.words_of("incident")) + captured.topic_lines_of("incident"))
        assert page.inner_text("#result-count").startswith(f"{len(expected)} records")
        rows = _all_rows(page)
        assert sorted(row[2] for row in rows) == expected
        assert all("@" in row[3] for row in rows), "each input record says where it is: file@offset"
        # Its subgraph over the application graph: the output it started from and the inputs it reached.
        crossed = page.evaluate("() => window.lineageGraph.nodes('.crossed').map((n) => n.id())")
        inputs = {p["id"] for p in points if p["capture_kind"] == "input"}
        assert output["id"] in crossed and inputs <= set(crossed)
        assert page.evaluate("window.lineageGraph.nodes('.result').length") == len(inputs)
        # The record level: a small trace's records sit inside their capture points, joined by their
        # lineage. Too many to read at once (more than 60), a capture point opens on a double-click;
        # the input records drawn are the result's.
        assert page.evaluate("window.lineageGraph.nodes('.record').length") == 0
        for node_id in sorted(inputs):
            click_node(page, node_id, double=True)
            page.wait_for_function(f"window.lineageGraph.getElementById('{node_id}').isParent()")
        drawn = page.evaluate(
            "() => window.lineageGraph.nodes('.record')"
            ".map((n) => ({parent: n.parent().id(), value: n.data('info').value}))"
        )
        assert drawn and all(d["parent"].startswith("capture:") for d in drawn)
        assert sorted(d["value"] for d in drawn if d["parent"] in inputs) == expected
        assert page.evaluate("window.lineageGraph.edges('.lineage').length") > 0
        assert page.get_attribute("#download-csv", "href").endswith("/download/csv/")
        csv = page.request.get(page.get_attribute("#download-csv", "href"))
        assert csv.ok and len(csv.text().splitlines()) == len(expected) + 1  # a header, then each record

        # Select inputs like these: what if the records this trace found had not been there?
        page.click("#whatif-from-trace")
        page.wait_for_url("**/whatifs/*/")
        page.wait_for_selector("#question-page[data-status='succeeded'][data-state='ready']", timeout=240_000)
        kept = [line for line in captured.lines if not set(line.split()) & captured.words_of("incident")]
        outputs = {json.loads(row[3])[0]: row for row in _all_rows(page)}
        assert set(outputs) == set(topic_totals(captured.lines))
        assert outputs["incident"][0].endswith("deleted"), "every record it came from is gone"
        for topic, total in topic_totals(kept).items():
            assert json.loads(outputs[topic][4] or outputs[topic][3])[1] == total, topic

        # The history lists it by name; pinned, it comes first, and its permalink opens it again.
        page.goto(f"{live_server.url}/history/")
        page.wait_for_selector("#history-page[data-state='ready']")
        row = page.locator("#history-table tbody tr[data-kind='trace']").filter(has_text="where incidents come from")
        assert "succeeded" in row.inner_text()
        row.locator("button.pin").click()
        page.wait_for_selector("#history-table tbody tr[data-kind='trace'] button.pin[aria-pressed='true']")
        page.screenshot(path=SCREENSHOT_DIR / "trace_5_history.png")
        page.goto(f"{live_server.url}/")
        page.wait_for_selector("#home-page[data-state='ready']")
        assert page.locator("#pinned-questions li").count() == 1
        assert "where incidents come from" in page.inner_text("#pinned-questions")
        page.click("#pinned-questions a")
        page.wait_for_url(trace_url)
        page.wait_for_selector("#question-page[data-status='succeeded'][data-state='ready']")

        # What if the lines that mention "disk" had not been there?
        points = _open_capture_points(page, app_url)
        text_input = next(p for p in points if p["capture_id"].endswith("0001-input-textFile"))  # the events' lines
        _select(page, text_input["id"])
        page.click("#ask-whatif")
        page.select_option("#ask-op", "contains")
        page.fill("#ask-value", "disk")
        page.click("#ask-submit")
        page.wait_for_url("**/whatifs/*/")
        page.wait_for_selector("#question-page[data-status='succeeded'][data-state='ready']", timeout=240_000)
        page.select_option("#fate-filter", "changed")
        page.wait_for_function(
            "[...document.querySelectorAll('#records-table tbody tr')]"
            ".every((tr) => tr.classList.contains('fate-changed'))"
        )
        page.screenshot(path=SCREENSHOT_DIR / "whatif_changed.png", full_page=True)
        remaining = [line for line in captured.lines if "disk" not in line.split()]
        before, after = topic_totals(captured.lines), topic_totals(remaining)
        changed = {json.loads(row[3])[0]: (json.loads(row[3])[1], json.loads(row[4])[1]) for row in _all_rows(page)}
        assert changed == {t: (before[t], after[t]) for t in before if t in after and before[t] != after[t]}
        assert set(TOPICS.values()) >= set(changed)
        assert "fate=changed" in page.url
        assert all(row[1].endswith("output-collect") for row in _all_rows(page)), "the outputs first"
        page.select_option("#point-filter", "")  # every capture point the deletion reached
        page.wait_for_function("document.querySelectorAll('#records-table tbody tr').length > 3")


def test_a_trace_across_two_applications_names_both_and_lists_the_writers_lines(live_server, spark, agent_token,
                                                                                analyst_page, tmp_path):
    """One application saves the lines holding a topic word, another counts their words: the
    reader's trace page links both applications and its records are the writer's input lines."""
    from django.contrib.auth import get_user_model

    from lineage_server.catalog.models import Application
    from lineage_server.tracing.models import Trace
    from lineage_server.tracing.services import ask_trace, run_trace
    from tests.lineage_server.tracing.captured import capture_chain

    first, reader, _ = capture_chain(spark, live_server.url, agent_token, tmp_path / "chain")
    trace = ask_trace(Application.objects.get(app_id=reader), by=get_user_model().objects.get(username="andy"),
                      direction="backward", seeds=Trace.objects.all(),
                      selection={"predicate": {"field": 0, "op": "equals", "value": "retry"}})
    assert run_trace(trace.pk).status == "succeeded"
    page = analyst_page
    page.goto(f"{live_server.url}/traces/{trace.pk}/")
    page.wait_for_selector("#question-page[data-status='succeeded'][data-state='ready']", timeout=120_000)
    links = page.eval_on_selector_all("#crossed-applications a", "as => as.map(a => a.textContent)")
    assert links == [reader, first.app_id]
    rows = _all_rows(page)
    assert sorted(row[2] for row in rows) == first.lines_with({"retry"})
    assert {row[3].split("@")[0].rsplit("/", 1)[-1] for row in rows} == {"events.txt"}
    page.screenshot(path=SCREENSHOT_DIR / "trace_across_applications.png", full_page=True)


def test_a_json_sources_panel_shows_the_rows_its_frame_read(live_server, spark, agent_token, analyst_page, tmp_path,
                                                            settings):
    """An unmodified job's read.json source: its panel's sample is the frame's rows, typed (the
    ids integers), at 1280x800."""
    from tests.lineage_server.tracing.test_typed_source_questions import CUSTOMERS as PEOPLE
    from tests.lineage_server.tracing.test_typed_source_questions import capture_json_totals

    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(tmp_path / "job" / "store")}
    app_id = capture_json_totals(spark, live_server.url, agent_token, tmp_path / "job")
    page = analyst_page
    page.set_viewport_size({"width": 1280, "height": 800})
    points = _open_capture_points(page, f"{live_server.url}/applications/{app_id}/")
    source = next(p for p in points if p["capture_kind"] == "input" and p["capture_id"].endswith("read.json"))
    _select(page, source["id"])
    page.wait_for_selector(".section-sample-records table")
    page.locator(".section-sample-records").scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOT_DIR / "app_page_json_source.png")
    assert _sample_texts(page) == [f"Row(country='{c['country']}', customer_id={c['customer_id']})" for c in PEOPLE]
