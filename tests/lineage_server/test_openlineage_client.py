"""The real OpenLineage client (openlineage-python) emitting through its HTTP transport to a live server."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as column_lineage
from openlineage.client.facet_v2 import error_message_run, job_type_job, schema_dataset
from openlineage.client.transport.http import ApiKeyTokenProvider, HttpCompression, HttpConfig, HttpTransport
from openlineage.client.uuid import generate_new_uuid
from requests import HTTPError

from lineage_server.catalog.models import Application, DatasetIO

pytestmark = pytest.mark.django_db(transaction=True)


def _client(url: str, token: str) -> OpenLineageClient:
    """The client as a user configures it: the HTTP transport with our agent token as its API key."""
    config = HttpConfig(url=url, auth=ApiKeyTokenProvider({"apiKey": token}), retry={"total": 0})
    return OpenLineageClient(transport=HttpTransport(config))


def _event(state: RunState, run_id: str, at: dt.datetime, **facets: Any) -> RunEvent:
    fields = [schema_dataset.SchemaDatasetFacetFields(name="day", type="date"),
              schema_dataset.SchemaDatasetFacetFields(name="orders", type="bigint")]
    lineage = column_lineage.ColumnLineageDatasetFacet(fields={
        "orders": column_lineage.Fields(inputFields=[
            column_lineage.InputField(namespace="s3://lake", name="raw/orders", field="id")]),
    })
    return RunEvent(
        eventType=state,
        eventTime=at.isoformat(),
        run=Run(runId=run_id, facets=facets),
        job=Job(namespace="etl", name="orders.daily_counts",
                facets={"jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="PYTHON",
                                                                jobType="JOB")}),
        inputs=[InputDataset(namespace="s3://lake", name="raw/orders")],
        outputs=[OutputDataset(namespace="s3://lake", name="marts/daily_counts",
                               facets={"schema": schema_dataset.SchemaDatasetFacet(fields=fields),
                                       "columnLineage": lineage})],
    )


def test_the_openlineage_client_posts_runs_that_land_in_the_catalog(live_server, agent_token, team):
    client = _client(live_server.url, agent_token)
    started = dt.datetime(2026, 11, 21, 6, 0, tzinfo=dt.UTC)
    run_id, failed_run = str(generate_new_uuid()), str(generate_new_uuid())
    client.emit(_event(RunState.START, run_id, started))
    client.emit(_event(RunState.COMPLETE, run_id, started + dt.timedelta(seconds=30)))
    client.emit(_event(RunState.COMPLETE, run_id, started + dt.timedelta(seconds=30)))  # a retry: no change
    client.emit(_event(RunState.START, failed_run, started))
    error = error_message_run.ErrorMessageRunFacet(message="boom", programmingLanguage="PYTHON")
    client.emit(_event(RunState.FAIL, failed_run, started + dt.timedelta(seconds=5), errorMessage=error))

    app = Application.objects.select_related("openlineage_run__job").get(app_id=f"openlineage-{run_id}")
    assert (app.team, app.status, app.name, app.ingested_events.count()) == (
        team, "succeeded", "orders.daily_counts", 2)
    assert app.openlineage_run.job.facets["jobType"]["integration"] == "PYTHON"
    written = DatasetIO.objects.select_related("dataset").get(application=app, direction="written")
    assert (written.dataset.path, [f["name"] for f in written.dataset.schema_fields]) == (
        "s3://lake/marts/daily_counts", ["day", "orders"])
    assert written.column_lineage["fields"]["orders"]["inputFields"][0]["field"] == "id"
    failed = Application.objects.get(app_id=f"openlineage-{failed_run}")
    assert failed.status == "failed" and failed.openlineage_run.facets["errorMessage"]["message"] == "boom"


def test_the_client_is_told_when_its_token_is_wrong(live_server, team):
    client = _client(live_server.url, "lat_not-a-token")
    with pytest.raises(HTTPError) as refused:
        client.emit(_event(RunState.START, str(generate_new_uuid()), dt.datetime.now(dt.UTC)))
    assert refused.value.response.status_code == 401
    assert not Application.objects.exists()


def test_the_client_may_compress_its_events(live_server, agent_token):
    config = HttpConfig(url=live_server.url, auth=ApiKeyTokenProvider({"apiKey": agent_token}), retry={"total": 0},
                        compression=HttpCompression.GZIP)
    run_id = str(generate_new_uuid())
    OpenLineageClient(transport=HttpTransport(config)).emit(_event(RunState.START, run_id, dt.datetime.now(dt.UTC)))
    assert Application.objects.get(app_id=f"openlineage-{run_id}").status == "running"
