"""End to end in chromium: a backward trace of a captured DataFrame output shows, on its page, the
source columns each column of the traced rows came from, as the lineage written out by hand for
the query has them (``tests/lineage_server/tracing/captured_columns``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.services import run_trace
from tests.browser.conftest import SCREENSHOT_DIR
from tests.lineage_server.tracing.captured_columns import COLUMN_SOURCES, ROWS_DECIDED_BY, capture_totals
from tests.spark_fixtures import spark

__all__ = ["spark"]

pytestmark = [pytest.mark.browser, pytest.mark.spark, pytest.mark.django_db(transaction=True)]

HOW = {"IDENTITY": "copied", "TRANSFORMATION": "computed from", "AGGREGATION": "aggregated from",
       "CONDITIONAL": "chosen by"}


def test_a_backward_traces_page_names_its_columns_sources(spark: Any, live_server: Any, agent_token: str,
                                                          analyst_page: Any, client_as: Any, tmp_path: Path,
                                                          settings: Any) -> None:
    folder = tmp_path / "job"
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(folder / "store")}
    app_id, _ = capture_totals(spark, live_server.url, agent_token, folder)
    output = CapturePoint.objects.get(application__app_id=app_id, kind="output")
    asked = client_as("andy", "analyst").post("/api/v1/traces/", {
        "application": app_id, "direction": "backward", "capture_point": output.capture_id, "name": "jp's sources",
        "selection": {"predicate": {"field": "country", "op": "equals", "value": "jp"}}}, format="json")
    assert asked.status_code == 202, asked.json()
    done = run_trace(asked.json()["id"])
    assert done is not None and done.status == "succeeded", done and done.error

    page = analyst_page
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/traces/{done.pk}/")
    page.wait_for_selector("#question-page[data-status='succeeded'][data-state='ready']")
    rows = page.evaluate("() => [...document.querySelectorAll('#traced-columns tbody tr')]"
                         ".map((tr) => [...tr.cells].map((td) => td.textContent))")
    path = {name: f"file:{(folder / name).resolve()}" for name in ("orders", "customers")}
    expected = sorted([column, path[dataset], source, f"{HOW[kind]} ({kind_type} {kind})"]
                      for column, sources in COLUMN_SOURCES.items()
                      for dataset, source, kind_type, kind in sources)
    expected += [["n", "", "", "no source column"]]
    assert sorted(rows) == sorted(expected)
    # the datasets link to their column graphs
    links = page.eval_on_selector_all("#traced-columns a", "as => as.map((a) => a.getAttribute('href'))")
    assert links and all(link.endswith("/?mode=columns") for link in links)
    decided = page.inner_text("#rows-decided-by")
    for dataset, column, _, kind in ROWS_DECIDED_BY:
        assert f"{dataset}.{column} ({kind})" in decided
    page.locator("#traced-columns").scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOT_DIR / "trace_columns_1280.png")
