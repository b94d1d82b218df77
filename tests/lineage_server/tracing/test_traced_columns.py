"""A backward trace of a captured DataFrame output names, for each column of the traced rows, the
source columns it came from (dataset, column, kind), through the real API: the job runs unmodified
in real PySpark with records on, its output point carries the query's column lineage to the server
(``CapturePoint.column_lineage``), and the trace's answer (``columns``) equals the lineage written
out by hand for the query (``captured_columns``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.services import run_trace
from tests.lineage_server.tracing.captured_columns import Source, capture_totals, expected_sources, jp_sources

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]


def as_sets(columns: dict[str, Any]) -> tuple[dict[str, set[Source]], set[Source]]:
    """The API's ``columns`` as the oracle's sets."""
    def tuples(sources: list[dict[str, Any]]) -> set[Source]:
        return {(s["dataset"], s["column"], s["type"], s["kind"]) for s in sources}

    return ({c["column"]: tuples(c["sources"]) for c in columns["columns"]}, tuples(columns["rows_decided_by"]))


@pytest.fixture
def totals_job(spark: Any, live_server: Any, agent_token: str, tmp_path: Path, settings: Any) -> tuple[str, Path]:
    folder = tmp_path / "job"
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(folder / "store")}
    app_id, rows = capture_totals(spark, live_server.url, agent_token, folder)
    assert {r.country for r in rows} == {"jp", "fr"}
    return app_id, folder


def test_a_traced_rows_columns_name_their_source_columns(totals_job: tuple[str, Path], client_as: Any) -> None:
    app_id, folder = totals_job
    analyst = client_as("andy", "analyst")
    output = CapturePoint.objects.get(application__app_id=app_id, kind="output")
    columns, deciders = expected_sources(folder)
    points = analyst.get(f"/api/v1/applications/{app_id}/capture-points/").json()
    listed = next(p for p in points.get("results", points) if p["capture_id"] == output.capture_id)
    assert set(listed["column_lineage"]["fields"]) == set(columns)
    # the run's manifest keeps it too, for a run opened from its folder
    (manifest,) = (folder / "store").glob("*/run.json")
    local_id = output.capture_id.split("/", 1)[1]
    kept = [p for p in json.loads(manifest.read_text())["points"] if p["capture_id"] == local_id]
    assert [p["column_lineage"] for p in kept] == [output.column_lineage]

    asked = analyst.post("/api/v1/traces/", {
        "application": app_id, "direction": "backward", "capture_point": output.capture_id,
        "selection": {"predicate": {"field": "country", "op": "equals", "value": "jp"}}}, format="json")
    assert asked.status_code == 202, asked.json()
    done = run_trace(asked.json()["id"])
    assert done is not None and done.status == "succeeded", done and done.error
    answer = analyst.get(f"/api/v1/traces/{done.pk}/").json()
    assert as_sets(answer["columns"]) == (columns, deciders)
    # the datasets named are the catalog's (the agent registered the reads), and the rows traced right
    assert all(s["dataset_id"] is not None for c in answer["columns"]["columns"] for s in c["sources"])
    orders, customers = jp_sources()
    assert answer["result_count"] == len(orders) + len(customers)


def test_a_forward_trace_and_a_what_if_name_no_columns(totals_job: tuple[str, Path], client_as: Any) -> None:
    app_id, _ = totals_job
    analyst = client_as("andy", "analyst")
    source = CapturePoint.objects.filter(application__app_id=app_id, kind="input").first()
    assert source is not None and source.column_lineage == {}
    asked = analyst.post("/api/v1/traces/", {"application": app_id, "direction": "forward",
                                             "capture_point": source.capture_id, "selection": {"all": True}},
                         format="json")
    assert asked.status_code == 202, asked.json()
    assert analyst.get(f"/api/v1/traces/{asked.json()['id']}/").json()["columns"] is None
