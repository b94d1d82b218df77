"""Questions asked by column at a DataFrame source read with ``read.json`` (its records are the
rows the frame read, ``storage.spark_rows``), through the server: a what-if deleting the customer
whose ``customer_id`` is 5 answers as the job re-run without that customer's line does, and a
predicate naming a column the source does not have is a 400 naming the columns it has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capture_agent.record.query.whatif_results import iter_whatif
from capture_agent.record.storage.fs import StoreFS
from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.services import run_trace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]

CUSTOMERS = [{"customer_id": i, "country": ["JP", "FR", "DE"][i % 3]} for i in range(9)]
ORDERS = [(k, k % 9, float(k % 7)) for k in range(40)]


def totals(spark: Any, customers: str, orders: str) -> Any:
    """The job: amounts per country of the orders joined with their customers."""
    from pyspark.sql import functions as F

    return spark.read.json(customers).join(spark.read.parquet(orders), "customer_id") \
        .groupBy("country").agg(F.sum("amount").alias("total"))


def capture_json_totals(spark: Any, server_url: str, token: str, folder: Path) -> str:
    """The job captured unmodified (records on), registered with the server at ``server_url``;
    its inputs and lineage under ``folder``. Returns its app id."""
    import capture_agent
    from capture_agent.record.capture import implicit

    folder.mkdir()
    (folder / "customers.json").write_text("".join(json.dumps(c) + "\n" for c in CUSTOMERS))
    spark.createDataFrame(ORDERS, "order_id long, customer_id long, amount double").write.parquet(
        str(folder / "orders"))
    agent = capture_agent.enable(spark, server_url=server_url, token=token, spool_dir=str(folder / "spool"))
    implicit.enable_records(spark, str(folder / "store"))
    try:
        totals(spark, str(folder / "customers.json"), str(folder / "orders")).collect()
        agent.flush(30)
    finally:
        implicit.disable_records(spark)
        capture_agent.disable()
    return str(spark.sparkContext.applicationId)


@pytest.fixture
def json_job(spark: Any, live_server: Any, agent_token: str, tmp_path: Path, settings: Any) -> tuple[str, Path]:
    """The job on the live server, its lineage store the server's: its app id and its folder."""
    folder = tmp_path / "job"
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(folder / "store")}
    return capture_json_totals(spark, live_server.url, agent_token, folder), folder


def test_a_whatif_by_column_at_a_json_source_answers_as_a_rerun(json_job: tuple[str, Path], client_as: Any,
                                                                  spark: Any, sc: Any) -> None:
    app_id, folder = json_job
    analyst = client_as("andy", "analyst")
    source = CapturePoint.objects.get(application__app_id=app_id, kind="input", capture_id__endswith="read.json")
    asked = analyst.post("/api/v1/whatifs/", {
        "application": app_id, "capture_point": source.capture_id,
        "selection": {"predicate": {"field": "customer_id", "op": "equals", "value": 5}}}, format="json")
    assert asked.status_code == 202, asked.json()
    done = run_trace(asked.json()["id"], spark=lambda: sc)
    assert done is not None and done.status == "succeeded", done and done.error

    before = {r.country: r.total for r in totals(spark, str(folder / "customers.json"), str(folder / "orders"))
              .collect()}
    (folder / "without.json").write_text("".join(json.dumps(c) + "\n" for c in CUSTOMERS if c["customer_id"] != 5))
    after = {r.country: r.total for r in totals(spark, str(folder / "without.json"), str(folder / "orders"))
             .collect()}
    store = StoreFS.resolve(done.result_location)
    target = done.summary["target"].split("/", 1)[1]
    rows = [r for r in iter_whatif(store, store.root) if r["capture_id"] == target]
    changed = {r["value"]["country"]: (r["value"]["total"], r["new_value"]["total"]) for r in rows
               if r["fate"] == "changed"}
    assert changed == {c: (before[c], after[c]) for c in before if c in after and after[c] != before[c]} != {}
    assert sorted(r["value"]["country"] for r in rows if r["fate"] == "deleted") == sorted(set(before) - set(after))
    assert done.summary["deleted_at"] == {source.capture_id: 1}


def test_a_predicate_on_a_column_the_source_lacks_is_a_400(json_job: tuple[str, Path], client_as: Any) -> None:
    app_id, _ = json_job
    analyst = client_as("andy", "analyst")
    source = CapturePoint.objects.get(application__app_id=app_id, kind="input", capture_id__endswith="read.json")
    for path in ("/api/v1/whatifs/", "/api/v1/traces/"):
        asked = analyst.post(path, {
            "application": app_id, "capture_point": source.capture_id, "direction": "forward",
            "selection": {"predicate": {"and": [{"field": "country", "op": "equals", "value": "JP"},
                                                {"field": "custid", "op": "equals", "value": 5}]}}}, format="json")
        assert asked.status_code == 400, asked.json()
        message = json.dumps(asked.json())
        assert "'custid' is not a column" in message and "its columns: country, customer_id" in message, message
