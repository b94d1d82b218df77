"""Column lineage across applications (``/datasets/{id}/columns/``, ``/datasets/{id}/column-impact/``,
``/applications/{app_id}/columns/``), from our agent's events and an OpenLineage client's run."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from capture_agent.column_lineage import openlineage_name
from lineage_server.catalog.models import Dataset
from lineage_server.catalog.selectors.columns import input_path
from tests.lineage_server.column_events import REPORT_RUN, agent_events, openlineage_report_event

pytestmark = pytest.mark.django_db


@pytest.fixture
def pipeline(post_events: Any, api_client: Any, agent_token: str) -> None:
    assert post_events(agent_events()).status_code == 200
    answer = api_client.post("/api/v1/lineage", openlineage_report_event(), content_type="application/json",
                             HTTP_AUTHORIZATION=f"Bearer {agent_token}")
    assert answer.status_code in (200, 201), answer.content


def _pk(path: str) -> int:
    return Dataset.objects.get(path=f"file:{path}").pk


def _columns(answer: dict[str, Any]) -> dict[str, int]:
    return {f"{n['data']['path'][5:]}.{n['label']}": n["depth"] for n in answer["nodes"] if n["kind"] == "column"}


def _edges(answer: dict[str, Any]) -> set[tuple[str, str, str]]:
    names = {n["id"]: (f"{n['data']['path'][5:]}.{n['label']}" if n["kind"] == "column" else n["label"][5:])
             for n in answer["nodes"]}
    assert all(e["source"] in names and e["target"] in names for e in answer["edges"])
    return {(names[e["source"]], names[e["target"]], e["kind"]) for e in answer["edges"]}


def test_one_columns_lineage_upstream_and_downstream_across_agent_and_openlineage_runs(viewer_client, pipeline):
    answer = viewer_client.get(f"/api/v1/datasets/{_pk('/clean')}/columns/?column=total&upstream=2&downstream=2")
    assert answer.status_code == 200
    body = answer.json()
    assert body["center"] == f"column:{_pk('/clean')}:total" and body["truncated"] is False
    # upstream: total's input and the column that filters its rows; downstream: our agent's aggregate,
    # then the OpenLineage run's copy of it
    assert _columns(body) == {"/clean.total": 0, "/raw.amount": -1, "/raw.name": -1, "/daily.sum": 1,
                              "/report.daily_total": 2}
    assert _edges(body) == {("/raw.amount", "/clean.total", "TRANSFORMATION"), ("/raw.name", "/clean", "FILTER"),
                            ("/clean.total", "/daily.sum", "AGGREGATION"),
                            ("/daily.sum", "/report.daily_total", "IDENTITY")}
    apps = {e["kind"]: e["app_ids"] for e in body["edges"]}
    assert apps["IDENTITY"] == [f"openlineage-{REPORT_RUN}"] and apps["AGGREGATION"] == ["local-daily"]
    parents = {n["id"]: n["parent"] for n in body["nodes"]}
    assert parents[f"column:{_pk('/daily')}:sum"] == f"dataset:{_pk('/daily')}"

    shallow = viewer_client.get(f"/api/v1/datasets/{_pk('/clean')}/columns/?column=total&upstream=0&downstream=1")
    assert _columns(shallow.json()) == {"/clean.total": 0, "/daily.sum": 1}


def test_all_columns_of_a_dataset(viewer_client, pipeline):
    body = viewer_client.get(f"/api/v1/datasets/{_pk('/daily')}/columns/?upstream=1&downstream=0").json()
    assert _columns(body) == {"/daily.n": 0, "/daily.sum": 0, "/clean.id": -1, "/clean.total": -1}
    assert ("/clean.id", "/daily", "GROUP_BY") in _edges(body)


def test_an_applications_columns(viewer_client, pipeline):
    body = viewer_client.get("/api/v1/applications/local-daily/columns/?upstream=1&downstream=1").json()
    assert body["center"] == "app:local-daily"
    assert _columns(body) == {"/clean.id": 0, "/clean.total": 0, "/daily.n": 0, "/daily.sum": 0,
                              "/raw.id": -1, "/raw.amount": -1, "/raw.name": -1, "/report.daily_total": 1}


def test_a_columns_impact_downloads_as_csv(viewer_client, pipeline):
    answer = viewer_client.get(f"/api/v1/datasets/{_pk('/raw')}/column-impact/?column=amount&format=csv")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    assert "attachment" in answer["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(answer.content.decode())))
    assert [(r["depth"], r["dataset"], r["column"], r["via"]) for r in rows] == [
        ("1", "file:/clean", "total", "TRANSFORMATION"), ("2", "file:/daily", "sum", "AGGREGATION"),
        ("3", "file:/report", "daily_total", "IDENTITY")]
    assert rows[2]["applications"] == f"openlineage-{REPORT_RUN}"
    twin = viewer_client.get(f"/api/v1/datasets/{_pk('/raw')}/column-impact/?column=amount&depth=1").json()
    assert [(r["dataset"], r["column"]) for r in twin] == [("file:/clean", "total")]


@pytest.mark.parametrize(("url", "field"), [
    ("/api/v1/datasets/{raw}/columns/?upstream=11", "upstream"),
    ("/api/v1/datasets/{raw}/columns/?downstream=x", "downstream"),
    ("/api/v1/datasets/{raw}/columns/?column=nope", "column"),
    ("/api/v1/datasets/{raw}/column-impact/", "column"),
    ("/api/v1/datasets/{raw}/column-impact/?column=amount&depth=0", "depth"),
    ("/api/v1/applications/local-daily/columns/?column=id", "column"),
])
def test_bad_parameters_are_a_400_naming_them(viewer_client, pipeline, url, field):
    answer = viewer_client.get(url.format(raw=_pk("/raw")))
    assert answer.status_code == 400 and field in answer.json(), answer.content


def test_a_bad_column_lineage_from_an_agent_is_a_400_naming_the_field(post_events):
    bad = agent_events()
    bad[2]["column_lineage"]["fields"]["id"]["inputFields"][0].pop("field")
    answer = post_events(bad)
    assert answer.status_code == 400 and "field" in str(answer.json()), answer.content
    assert not Dataset.objects.exists()


def test_another_teams_column_lineage_is_not_shown(client_as, pipeline):
    from lineage_server.accounts.services import create_team

    stranger = client_as("stranger", "viewer", in_team=create_team("other", "Other team"))
    assert stranger.get(f"/api/v1/datasets/{_pk('/clean')}/columns/").status_code == 404


def test_the_openapi_schema_has_the_column_endpoints(viewer_client):
    paths = viewer_client.get("/api/schema/?format=json").json()["paths"]
    assert "/api/v1/datasets/{id}/columns/" in paths and "/api/v1/datasets/{id}/column-impact/" in paths
    assert "/api/v1/applications/{app_id}/columns/" in paths
    names = {p["name"] for p in paths["/api/v1/datasets/{id}/columns/"]["get"]["parameters"]}
    assert {"column", "upstream", "downstream"} <= names


@pytest.mark.parametrize("path", ["file:/data/x", "hdfs://nn:8020/data/x", "s3a://bucket/key/part", "default.t"])
def test_the_agents_input_names_are_the_catalogs_paths(path):
    namespace, name = openlineage_name(path)
    assert input_path({"namespace": namespace, "name": name}) == path


def test_the_column_impact_command_prints_the_apis_csv(viewer_client, pipeline):
    from django.core.management import CommandError, call_command

    out = io.StringIO()
    call_command("column_impact", "file:/raw", "amount", "--depth", "2", stdout=out)
    api = viewer_client.get(f"/api/v1/datasets/{_pk('/raw')}/column-impact/?column=amount&depth=2&format=csv")
    assert out.getvalue() == api.content.decode()
    assert out.getvalue().splitlines()[1:] == ["1,file:/clean,total,TRANSFORMATION,local-clean",
                                               "2,file:/daily,sum,AGGREGATION,local-daily"]
    with pytest.raises(CommandError, match="No column 'nope'"):
        call_command("column_impact", "file:/raw", "nope")
    with pytest.raises(CommandError, match="No dataset"):
        call_command("column_impact", "file:/nowhere", "x")
