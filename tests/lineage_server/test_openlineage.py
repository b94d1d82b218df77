"""OpenLineage run events in: validated against the spec's schema files, mapped into the catalog idempotently."""

from __future__ import annotations

import copy
import json
import random
import uuid
from typing import Any

import pytest

from lineage_server.catalog.models import (
    Application,
    Dataset,
    DatasetIO,
    IngestedEvent,
    OpenLineageJob,
    OpenLineageRun,
)
from tests.lineage_server.events import event
from tests.lineage_server.openlineage_events import airflow_run, dbt_run, spark_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def post_lineage(api_client: Any, agent_token: str) -> Any:
    """POST one OpenLineage event (or, with ``batch``, a list) as the HTTP transport does; returns the response."""

    def post(body: Any, token: str | None = agent_token, batch: bool = False) -> Any:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
        url = "/api/v1/lineage/batch" if batch else "/api/v1/lineage"
        # JSON as the HTTP transport sends it (json.dumps: ASCII, a lone surrogate as its \u escape)
        return api_client.post(url, json.dumps(body), content_type="application/json", **headers)

    return post


def _snapshot() -> dict[str, int]:
    return {model.__name__: model.objects.count()
            for model in (Application, Dataset, DatasetIO, IngestedEvent, OpenLineageJob, OpenLineageRun)}


def _run(run_id: str) -> Application:
    return Application.objects.select_related("openlineage_run__job").get(app_id=f"openlineage-{run_id}")


def test_a_spark_run_becomes_an_application_with_its_job_datasets_schema_and_column_lineage(post_lineage, team):
    run_id = str(uuid.uuid4())
    for one in spark_run(run_id):
        response = post_lineage(one)
        assert response.status_code == 200, response.content
        assert response.json() == {"accepted": 1, "duplicates": 0}
    app = _run(run_id)
    assert (app.team, app.status, app.name) == (team, "succeeded", "nightly_totals.execute_insert_into_hadoop_fs_"
                                                                    "relation_command.warehouse_daily_totals")
    assert (app.started_at.isoformat(), app.ended_at.isoformat()) == ("2026-11-21T02:00:00.100000+00:00",
                                                                      "2026-11-21T02:00:41.900000+00:00")
    run = app.openlineage_run
    assert (run.job.namespace, str(run.run_id)) == ("spark-prod", run_id)
    assert run.job.facets["jobType"] == {"processingType": "BATCH", "integration": "SPARK", "jobType": "SQL_JOB"}
    assert run.facets["processing_engine"]["name"] == "spark" and run.parent_run_id is not None
    ios = {io.direction: io for io in DatasetIO.objects.filter(application=app).select_related("dataset")}
    assert len(ios) == 2  # START and COMPLETE both list them: one read and one write per run
    source, target = ios["read"].dataset, ios["written"].dataset
    assert (source.path, source.namespace, source.name) == ("file:/data/sales.csv", "file", "/data/sales.csv")
    assert [f["name"] for f in source.schema_fields] == ["day", "amount"]
    assert (target.path, target.format, ios["written"].size_bytes) == ("file:/warehouse/daily_totals", "parquet", 40960)
    inputs = ios["written"].column_lineage["fields"]["total"]["inputFields"]
    assert [(i["name"], i["field"]) for i in inputs] == [("/data/sales.csv", "amount")]
    assert "_producer" not in ios["written"].column_lineage


def test_airflow_and_dbt_runs_map_their_tables_and_a_failure(post_lineage):
    airflow, dbt = str(uuid.uuid4()), str(uuid.uuid4())
    for one in airflow_run(airflow) + dbt_run(dbt, failed=True):
        assert post_lineage(one).status_code == 200
    task = _run(airflow)
    assert (task.status, task.openlineage_run.job.name) == ("succeeded", "orders_etl.count_orders")
    assert "INSERT INTO order_counts" in task.openlineage_run.job.facets["sql"]["query"]
    paths = set(DatasetIO.objects.filter(application=task).values_list("direction", "dataset__path"))
    assert paths == {("read", "postgres://db.internal:5432/shop.public.orders"),
                     ("written", "postgres://db.internal:5432/shop.public.order_counts")}
    model = _run(dbt)
    assert model.status == "failed" and model.ended_at is not None
    assert model.openlineage_run.facets["errorMessage"]["message"].startswith("Database Error")
    assert DatasetIO.objects.filter(application=model, direction="read").count() == 2
    assert Dataset.objects.get(name="ANALYTICS.MARTS.CUSTOMER_DISCOUNTS").path == (
        "snowflake://acme-analytics/ANALYTICS.MARTS.CUSTOMER_DISCOUNTS")


def test_sending_events_again_or_in_another_order_changes_nothing(post_lineage):
    events = spark_run() + airflow_run() + dbt_run()
    assert post_lineage(events, batch=True).json() == {"accepted": 7, "duplicates": 0}
    before = _snapshot()
    apps = {a.app_id: (a.status, a.started_at, a.ended_at, a.name) for a in Application.objects.all()}
    assert post_lineage(events, batch=True).json() == {"accepted": 0, "duplicates": 7}
    for one in events:
        assert post_lineage(one).json() == {"accepted": 0, "duplicates": 1}
    assert _snapshot() == before
    # The same runs' events in another order, under other run ids: the same catalog.
    renamed = {e["run"]["runId"]: str(uuid.uuid4()) for e in events}
    shuffled = copy.deepcopy(events)
    for one in shuffled:
        one["run"]["runId"] = renamed[one["run"]["runId"]]
    random.Random(3).shuffle(shuffled)
    for one in shuffled:
        assert post_lineage(one).status_code == 200
    for old, new in renamed.items():
        assert (lambda a: (a.status, a.started_at, a.ended_at, a.name))(_run(new)) == apps[f"openlineage-{old}"]
        assert DatasetIO.objects.filter(application=_run(new)).count() == DatasetIO.objects.filter(
            application=_run(old)).count()


def test_a_dataset_an_openlineage_job_writes_and_a_captured_spark_job_reads_joins_the_dataset_graph(
        post_lineage, post_events, viewer_client):
    run_id = str(uuid.uuid4())
    post_lineage(spark_run(run_id, output="/warehouse/daily_totals"), batch=True)
    post_events([event("application_start", "local-reader", 0, name="report"),
                 event("dataset_io", "local-reader", 1, path="file:/warehouse/daily_totals", direction="read",
                       format="parquet")])
    graph = viewer_client.get("/api/v1/applications/local-reader/pipeline/?upstream=4").json()
    nodes = {node["id"]: node for node in graph["nodes"]}
    assert f"app:openlineage-{run_id}" in nodes
    assert {n["label"] for n in nodes.values() if n["kind"] == "dataset"} >= {"file:/data/sales.csv",
                                                                              "file:/warehouse/daily_totals"}
    dataset = viewer_client.get(f"/api/v1/datasets/{Dataset.objects.get(name='/warehouse/daily_totals').pk}/").json()
    assert (dataset["namespace"], dataset["name"]) == ("file", "/warehouse/daily_totals")
    assert [f["name"] for f in dataset["schema_fields"]] == ["day", "total"]
    run = viewer_client.get(f"/api/v1/applications/openlineage-{run_id}/").json()["openlineage"]
    assert (run["job_namespace"], run["run_id"], run["job_facets"]["jobType"]["integration"]) == (
        "spark-prod", run_id, "SPARK")
    assert viewer_client.get("/api/v1/applications/local-reader/").json()["openlineage"] is None
    # The run's own pages draw: no jobs or stages, its datasets.
    graph = viewer_client.get(f"/api/v1/applications/openlineage-{run_id}/graph/")
    assert graph.status_code == 200 and any(n["data"].get("path") == "file:/data/sales.csv"
                                            for n in graph.json()["nodes"] if "data" in n)
    assert viewer_client.get(f"/applications/openlineage-{run_id}/").status_code == 200


def _without(event: dict[str, Any], *path: Any) -> dict[str, Any]:
    event = copy.deepcopy(event)
    holder = event
    for part in path[:-1]:
        holder = holder[part]
    del holder[path[-1]]
    return event


def _with(event: dict[str, Any], value: Any, *path: Any) -> dict[str, Any]:
    event = copy.deepcopy(event)
    holder = event
    for part in path[:-1]:
        holder = holder[part]
    holder[path[-1]] = value
    return event


_GOOD = spark_run(str(uuid.uuid4()))[1]


@pytest.mark.parametrize(("bad", "field"), [
    (_without(_GOOD, "run", "runId"), "run.runId"),
    (_with(_GOOD, "run-42", "run", "runId"), "run.runId"),
    (_without(_GOOD, "eventTime"), "eventTime"),
    (_with(_GOOD, "yesterday", "eventTime"), "eventTime"),
    (_with(_GOOD, "2026-11-21T02:00:00", "eventTime"), "eventTime"),  # no time zone
    (_with(_GOOD, "FINISHED", "eventType"), "eventType"),
    (_without(_GOOD, "producer"), "producer"),
    (_without(_GOOD, "job", "namespace"), "job.namespace"),
    (_without(_GOOD, "inputs", 0, "name"), "inputs.0.name"),
    (_with(_GOOD, "x" * 1025, "outputs", 0, "name"), "outputs.0.name"),
    (_with(_GOOD, {"day": "date"}, "outputs", 0, "facets", "schema", "fields"), "outputs.0.facets.schema.fields"),
    (_without(_GOOD, "outputs", 0, "facets", "columnLineage", "fields", "total", "inputFields"),
     "outputs.0.facets.columnLineage.fields.total.inputFields"),
    (_without(_GOOD, "run", "facets", "parent", "_producer"), "run.facets.parent._producer"),
    (_with(_GOOD, "many", "outputs", 0, "outputFacets", "outputStatistics", "rowCount"),
     "outputs.0.outputFacets.outputStatistics.rowCount"),
    ({"eventTime": "2026-11-21T00:00:00Z", "producer": "p", "schemaURL": "u",
      "dataset": {"namespace": "file", "name": "/x"}}, "run"),
    ([1, 2], "(event)"),
    (_with(_GOOD, "orders \ud800", "outputs", 0, "name"), "outputs.0.name"),  # a lone surrogate
    (_with(_GOOD, "a\u0000b", "job", "name"), "job.name"),  # PostgreSQL stores no NUL in text
])
def test_a_bad_event_is_a_400_naming_the_field_and_stores_nothing(post_lineage, bad, field):
    before = _snapshot()
    response = post_lineage(bad)
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert _snapshot() == before


def test_one_bad_event_refuses_the_whole_batch(post_lineage):
    events = airflow_run() + [_without(_GOOD, "job")]
    response = post_lineage(events, batch=True)
    assert response.status_code == 400, response.content
    assert response.json() == {"3": {"job": ["This field is required."]}}
    assert _snapshot()["Application"] == 0


@pytest.mark.parametrize("header", [None, "Bearer lat_not-a-token"])
def test_missing_or_unknown_tokens_are_401(post_lineage, header):
    assert post_lineage(_GOOD, token=header.split()[1] if header else None).status_code == 401


def test_a_personal_token_cannot_post_lineage(post_lineage, make_member):
    from lineage_server.accounts.services import create_personal_token

    raw = create_personal_token(make_member("pia", "admin"), "script")[1]
    assert post_lineage(_GOOD, token=raw).status_code == 401


def test_another_teams_run_is_refused(post_lineage, team):
    from lineage_server.accounts.services import create_agent_token, create_team

    other = create_agent_token(create_team("other", "Other"), "theirs")[1]
    start, complete = spark_run()
    assert post_lineage(start, token=other).status_code == 200
    assert post_lineage(complete).status_code == 403


def test_the_endpoint_is_in_the_openapi_schema(api_client):
    schema = api_client.get("/api/schema/?format=json").json()
    one = schema["paths"]["/api/v1/lineage"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert one["required"] == ["eventTime", "producer", "schemaURL", "run", "job"]
    batch = schema["paths"]["/api/v1/lineage/batch"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert batch["type"] == "array" and batch["items"] == one


def test_a_gzip_body_is_read_and_a_bomb_or_garbage_is_a_400(api_client, agent_token, settings):
    import gzip
    import json

    headers = {"HTTP_AUTHORIZATION": f"Bearer {agent_token}", "HTTP_CONTENT_ENCODING": "gzip"}
    body = gzip.compress(json.dumps(_GOOD).encode())
    response = api_client.post("/api/v1/lineage", body, content_type="application/json", **headers)
    assert response.status_code == 200, response.content
    settings.LINEAGE = {**settings.LINEAGE, "INGEST_MAX_BYTES": 10_000}
    bomb = gzip.compress(json.dumps({**_GOOD, "padding": "x" * 20_000}).encode())
    response = api_client.post("/api/v1/lineage", bomb, content_type="application/json", **headers)
    assert response.status_code == 400 and "LINEAGE_INGEST_MAX_BYTES" in response.json()["detail"]
    response = api_client.post("/api/v1/lineage", b"not gzip", content_type="application/json", **headers)
    assert response.status_code == 400 and "gzip" in response.json()["detail"]
    headers["HTTP_CONTENT_ENCODING"] = "br"
    assert api_client.post("/api/v1/lineage", body, content_type="application/json", **headers).status_code == 415
