"""A small pipeline with column lineage, for the API and browser tests: two applications of our agent
and one OpenLineage run of the real openlineage-python client, writing from one to the next.

    file:/raw (id, amount, name) --local-clean--> file:/clean (id, total)   [raw.name filters the rows]
    file:/clean --local-daily--> file:/daily (n, sum)                       [clean.id groups the rows]
    file:/daily --OpenLineage orders.report--> file:/report (daily_total)
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import column_lineage_dataset as cl
from openlineage.client.serde import Serde

from tests.lineage_server.events import event

REPORT_RUN = "0193ab2c-7e1f-7a4b-9c3d-2f1e0d9c8b7a"


def _input(path: str, field: str, kind: str, subtype: str) -> dict[str, Any]:
    return {"namespace": "file", "name": path, "field": field,
            "transformations": [{"type": kind, "subtype": subtype}]}


def _app(app_id: str, read: str, written: str, lineage: dict[str, Any]) -> list[dict[str, Any]]:
    return [event("application_start", app_id, 0, name=app_id),
            event("dataset_io", app_id, 1, path=f"file:{read}", direction="read", format="parquet",
                  sql_execution_id=0),
            event("dataset_io", app_id, 2, path=f"file:{written}", direction="written", format="parquet",
                  sql_execution_id=0, column_lineage=lineage)]


def agent_events() -> list[dict[str, Any]]:
    clean = {"fields": {"id": {"inputFields": [_input("/raw", "id", "DIRECT", "IDENTITY")]},
                        "total": {"inputFields": [_input("/raw", "amount", "DIRECT", "TRANSFORMATION")]}},
             "dataset": [_input("/raw", "name", "INDIRECT", "FILTER")]}
    daily = {"fields": {"n": {"inputFields": [_input("/clean", "id", "DIRECT", "AGGREGATION")]},
                        "sum": {"inputFields": [_input("/clean", "total", "DIRECT", "AGGREGATION")]}},
             "dataset": [_input("/clean", "id", "INDIRECT", "GROUP_BY")]}
    return [*_app("local-clean", "/raw", "/clean", clean), *_app("local-daily", "/clean", "/daily", daily)]


def openlineage_report_event() -> str:
    """The report run's COMPLETE event, built and serialised by the openlineage-python client."""
    lineage = cl.ColumnLineageDatasetFacet(fields={"daily_total": cl.Fields(inputFields=[
        cl.InputField(namespace="file", name="/daily", field="sum",
                      transformations=[cl.Transformation(type="DIRECT", subtype="IDENTITY", description="",
                                                         masking=False)])])})
    run_event = RunEvent(
        eventType=RunState.COMPLETE, eventTime=dt.datetime(2026, 11, 21, 6, 0, tzinfo=dt.UTC).isoformat(),
        run=Run(runId=REPORT_RUN), job=Job(namespace="etl", name="orders.report"),
        inputs=[InputDataset(namespace="file", name="/daily")],
        outputs=[OutputDataset(namespace="file", name="/report", facets={"columnLineage": lineage})])
    return str(Serde.to_json(run_event))
