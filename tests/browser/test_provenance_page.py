"""End to end in chromium: a provenance graph indexed by a real Spark build, found from the list,
and the lineage of an item asked and drawn (the CSProv paper's person example)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from lineage_server.provenance.models import ProvenanceGraph
from lineage_server.provenance.services import add_triples, create_graph, run_index_build
from tests.browser.conftest import SCREENSHOT_DIR
from tests.lineage_server.provenance.conftest import person_jsonl
from tests.spark_fixtures import sc, spark

__all__ = ["sc", "spark"]

pytestmark = [pytest.mark.browser, pytest.mark.spark, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def indexed(team: Any, make_member: Any, settings: Any, tmp_path: Path, sc: Any) -> ProvenanceGraph:
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(tmp_path / "store")}
    analyst = make_member("andy", "analyst")
    graph = create_graph(team, by=analyst, name="person records")
    batch = add_triples(graph, io.BytesIO(person_jsonl()), "jsonl", by=analyst)
    assert batch.rows == 15
    build = run_index_build(graph.builds.get().pk, spark=lambda: sc)
    assert build is not None and build.status == "succeeded", build.error if build else None
    return graph


def _labels(page: Any) -> list[str]:
    return page.evaluate("() => window.lineageGraph.nodes().map((n) => n.data('label')).sort()")


def test_ask_the_lineage_of_an_item_and_see_what_was_read(live_server, indexed, page, page_errors):
    page.goto(f"{live_server.url}/provenance/")
    page.wait_for_selector("#provenance-graphs-page[data-state='ready']")
    page.click("#provenance-graphs a:has-text('person records')")
    page.wait_for_url(f"**/provenance/{indexed.pk}/")
    page.wait_for_selector("#provenance-page[data-state='ready']")
    assert "Connected sets" in page.inner_text("#details")

    page.fill("#item", "23")
    page.click("#ask-lineage")
    page.wait_for_url("**item=23**")
    page.wait_for_selector("#provenance-page[data-state='ready']")
    assert _labels(page) == ["15", "18", "23", "3", "6"]
    assert page.inner_text("#lineage-status") == "4 ancestors · 4 triples · read 1 connected set (4 triples)"
    assert "Triples read" in page.inner_text("#details")
    page.screenshot(path=str(SCREENSHOT_DIR / "provenance-lineage.png"))

    # The page's URL keeps the question: opened again, it asks it at once; descendants the other way.
    page.goto(f"{live_server.url}/provenance/{indexed.pk}/?item=3&direction=descendants")
    page.wait_for_selector("#provenance-page[data-state='ready']")
    assert _labels(page) == ["15", "23", "3"]

    page.fill("#item", "nowhere")
    page.click("#ask-lineage")
    page.wait_for_selector("#provenance-page[data-state='error']")
    assert "no triple" in page.inner_text("#lineage-status")
    # The browser logs the 404 it was answered; nothing else went wrong.
    page_errors[:] = [e for e in page_errors if "404" not in e]
