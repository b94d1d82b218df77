"""OpenLineage run events as the stock integrations send them (Spark, Airflow, dbt), shaped like the spec's
examples (spec/tests/ of the OpenLineage repository), for the server's tests and the ingest bench."""

from __future__ import annotations

import uuid
from typing import Any

SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FACETS = "https://openlineage.io/spec/facets"


def _facet(producer: str, kind: str, schema_version: str = "1-0-0", /, **fields: Any) -> dict[str, Any]:
    return {"_producer": producer, "_schemaURL": f"{FACETS}/{schema_version}/{kind}.json", **fields}


def _schema(producer: str, *columns: tuple[str, str]) -> dict[str, Any]:
    return _facet(producer, "SchemaDatasetFacet", "1-2-0", fields=[{"name": n, "type": t} for n, t in columns])


def _column_lineage(producer: str, namespace: str, name: str, columns: dict[str, list[str]]) -> dict[str, Any]:
    """Each output column from the named input columns of one input dataset, as DIRECT IDENTITY."""
    fields = {
        out: {"inputFields": [{"namespace": namespace, "name": name, "field": f,
                               "transformations": [{"type": "DIRECT", "subtype": "IDENTITY", "masking": False}]}
                              for f in inputs]}
        for out, inputs in columns.items()
    }
    return _facet(producer, "ColumnLineageDatasetFacet", "1-2-0", fields=fields)


def run_event(event_type: str, run_id: str, job: tuple[str, str], producer: str, *, time: str,
              inputs: list[dict[str, Any]] | None = None, outputs: list[dict[str, Any]] | None = None,
              run_facets: dict[str, Any] | None = None, job_facets: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "eventType": event_type,
        "eventTime": time,
        "producer": producer,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run_id, "facets": run_facets or {}},
        "job": {"namespace": job[0], "name": job[1], "facets": job_facets or {}},
        "inputs": inputs or [],
        "outputs": outputs or [],
    }


def spark_run(run_id: str | None = None, output: str = "/warehouse/daily_totals") -> list[dict[str, Any]]:
    """The OpenLineage Spark agent's START and COMPLETE of one SQL execution writing Parquet from a CSV file."""
    producer = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark"
    run_id = run_id or str(uuid.uuid4())
    job = ("spark-prod", "nightly_totals.execute_insert_into_hadoop_fs_relation_command.warehouse_daily_totals")
    parent = _facet(producer, "ParentRunFacet", "1-1-0", run={"runId": str(uuid.uuid5(uuid.NAMESPACE_URL, run_id))},
                    job={"namespace": "spark-prod", "name": "nightly_totals"})
    engine = _facet(producer, "ProcessingEngineRunFacet", "1-1-1", version="4.0.1", name="spark",
                    openlineageAdapterVersion="1.54.0")
    job_type = _facet(producer, "JobTypeJobFacet", "2-0-3", processingType="BATCH", integration="SPARK",
                      jobType="SQL_JOB")
    source = {"namespace": "file", "name": "/data/sales.csv",
              "facets": {"schema": _schema(producer, ("day", "date"), ("amount", "decimal(10,2)")),
                         "dataSource": _facet(producer, "DatasourceDatasetFacet", uri="file", name="file")}}
    target = {"namespace": "file", "name": output,
              "facets": {"schema": _schema(producer, ("day", "date"), ("total", "decimal(20,2)")),
                         "storage": _facet(producer, "StorageDatasetFacet", storageLayer="default",
                                           fileFormat="parquet"),
                         "columnLineage": _column_lineage(producer, "file", "/data/sales.csv",
                                                          {"day": ["day"], "total": ["amount"]})},
              "outputFacets": {"outputStatistics": _facet(producer, "OutputStatisticsOutputDatasetFacet", "1-0-2",
                                                          rowCount=365, size=40960)}}
    facets = {"parent": parent, "processing_engine": engine}
    return [
        run_event("START", run_id, job, producer, time="2026-11-21T02:00:00.100Z", inputs=[source],
                  outputs=[{k: v for k, v in target.items() if k != "outputFacets"}], run_facets=facets,
                  job_facets={"jobType": job_type}),
        run_event("COMPLETE", run_id, job, producer, time="2026-11-21T02:00:41.900Z", inputs=[source],
                  outputs=[target], run_facets=facets, job_facets={"jobType": job_type}),
    ]


def airflow_run(run_id: str | None = None) -> list[dict[str, Any]]:
    """Airflow's OpenLineage provider: a SQL task of a DAG run counting orders from one Postgres table into another."""
    producer = "https://github.com/apache/airflow/tree/providers-openlineage/2.20.3"
    run_id = run_id or str(uuid.uuid4())
    job = ("airflow-prod", "orders_etl.count_orders")
    job_facets = {
        "jobType": _facet(producer, "JobTypeJobFacet", "2-0-3", processingType="BATCH", integration="AIRFLOW",
                          jobType="TASK"),
        "sql": _facet(producer, "SQLJobFacet", query="INSERT INTO order_counts SELECT day, count(*) FROM orders "
                                                     "GROUP BY day"),
    }
    run_facets = {
        "nominalTime": _facet(producer, "NominalTimeRunFacet", nominalStartTime="2026-11-21T00:00:00Z"),
        "parent": _facet(producer, "ParentRunFacet", "1-1-0", run={"runId": str(uuid.uuid4())},
                         job={"namespace": "airflow-prod", "name": "orders_etl"}),
        "processing_engine": _facet(producer, "ProcessingEngineRunFacet", "1-1-1", version="3.1.0", name="Airflow",
                                    openlineageAdapterVersion="2.20.3"),
    }
    orders = {"namespace": "postgres://db.internal:5432", "name": "shop.public.orders",
              "facets": {"schema": _schema(producer, ("id", "integer"), ("day", "date"))}}
    counts = {"namespace": "postgres://db.internal:5432", "name": "shop.public.order_counts",
              "facets": {"schema": _schema(producer, ("day", "date"), ("orders", "bigint")),
                         "columnLineage": _column_lineage(producer, "postgres://db.internal:5432",
                                                          "shop.public.orders", {"day": ["day"], "orders": ["id"]})}}
    return [
        run_event("START", run_id, job, producer, time="2026-11-21T00:05:00Z", run_facets=run_facets,
                  job_facets=job_facets),
        run_event("RUNNING", run_id, job, producer, time="2026-11-21T00:05:10Z", inputs=[orders], run_facets={}),
        run_event("COMPLETE", run_id, job, producer, time="2026-11-21T00:05:31Z", inputs=[orders], outputs=[counts],
                  run_facets=run_facets, job_facets=job_facets),
    ]


def dbt_run(run_id: str | None = None, failed: bool = False) -> list[dict[str, Any]]:
    """dbt-ol: one model built from two Snowflake tables (a FAIL with its error when ``failed``)."""
    producer = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt"
    run_id = run_id or str(uuid.uuid4())
    job = ("dbt-prod", "analytics.marts.customer_discounts")
    namespace = "snowflake://acme-analytics"
    job_facets = {"jobType": _facet(producer, "JobTypeJobFacet", "2-0-3", processingType="BATCH",
                                    integration="DBT", jobType="MODEL")}
    inputs = [{"namespace": namespace, "name": f"ANALYTICS.RAW.{table}",
               "facets": {"schema": _schema(producer, *columns)}}
              for table, columns in (("CUSTOMERS", (("ID", "NUMBER"), ("NAME", "VARCHAR"))),
                                     ("DISCOUNTS", (("CUSTOMERS_ID", "NUMBER"), ("AMOUNT_OFF", "NUMBER"))))]
    output = {"namespace": namespace, "name": "ANALYTICS.MARTS.CUSTOMER_DISCOUNTS",
              "facets": {"schema": _schema(producer, ("NAME", "VARCHAR"), ("AMOUNT_OFF", "NUMBER")),
                         "columnLineage": _column_lineage(producer, namespace, "ANALYTICS.RAW.CUSTOMERS",
                                                          {"NAME": ["NAME", "ID"]})}}
    end: dict[str, Any] = {}
    if failed:
        end = {"errorMessage": _facet(producer, "ErrorMessageRunFacet", "1-0-1",
                                      message="Database Error in model customer_discounts",
                                      programmingLanguage="SQL")}
    return [
        run_event("START", run_id, job, producer, time="2026-11-21T03:00:00.000000+00:00", inputs=inputs,
                  outputs=[output], job_facets=job_facets),
        run_event("FAIL" if failed else "COMPLETE", run_id, job, producer, time="2026-11-21T03:02:12.500000+00:00",
                  inputs=inputs, outputs=[output], job_facets=job_facets, run_facets=end),
    ]
