"""Traces of a captured DataFrame job through the server (run_trace, as the worker's task runs it):
registered capture points, answers equal to oracles from the tables, both directions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lineage_server.catalog.models import Application, CapturePoint
from lineage_server.tracing.models import Trace
from lineage_server.tracing.services import ask_trace, run_trace

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.spark]

ORDERS = [(i, f"c{i % 5}", float(i % 11)) for i in range(60)]
CUSTOMERS = [(f"c{i}", ["JP", "FR"][i % 2]) for i in range(5)]


def _records(trace: Trace) -> list[dict[str, Any]]:
    from capture_agent.record.query.results import iter_records
    from capture_agent.record.storage.fs import StoreFS

    store = StoreFS.resolve(trace.result_location)
    return list(iter_records(store, store.root))


@pytest.fixture
def job(spark: Any, live_server: Any, agent_token: str, tmp_path: Path) -> tuple[str, list[Any]]:
    """Orders (Parquet) joined with customers (local rows), totals per country over 5, collected."""
    from pyspark.sql import functions as F

    import capture_agent
    from capture_agent import LineageContext

    orders_path = str(tmp_path / "orders")
    spark.createDataFrame(ORDERS, "order_id long, customer_id string, amount double").repartition(2) \
        .write.parquet(orders_path)
    agent = capture_agent.enable(spark, server_url=live_server.url, token=agent_token,
                                 spool_dir=str(tmp_path / "spool"))
    try:
        lc = LineageContext(spark, store=str(tmp_path / "store"))
        orders = lc.read.parquet(orders_path)
        customers = lc.createDataFrame(CUSTOMERS, "customer_id string, country string")
        totals = orders.where(F.col("amount") > 5).join(customers, "customer_id").groupBy("country") \
            .agg(F.sum("amount").alias("total"))
        result = totals.collect()
        agent.flush(30)
    finally:
        capture_agent.disable()
    return spark.sparkContext.applicationId, result


def test_backward_and_forward_through_the_server(job: tuple[str, list[Any]], make_member: Any) -> None:
    app_id, result = job
    analyst = make_member("andy", "analyst")
    app = Application.objects.get(app_id=app_id)
    points = {p.capture_id: p for p in CapturePoint.objects.filter(application=app)}
    output = next(p for p in points.values() if p.kind == "output" and p.capture_id.endswith("-collect"))
    # the aggregate's map side is a capture point of its own, registered with its parents
    assert [points[c].kind for c in output.parent_capture_ids] == ["combiner"]
    combiner = points[output.parent_capture_ids[0]]
    assert sorted(points[c].kind for c in combiner.parent_capture_ids) == ["input", "input"]
    assert [r.country for r in result] and {r.country for r in result} == {"JP", "FR"}

    trace = ask_trace(app, by=analyst, direction="backward", capture_point=output.capture_id,
                      selection={"predicate": {"field": "country", "op": "equals", "value": "JP"}},
                      seeds=Trace.objects.all())
    done = run_trace(trace.pk)
    assert done is not None and done.status == "succeeded", done and done.error
    japanese = {c[0] for c in CUSTOMERS if c[1] == "JP"}
    expected_orders = [o for o in ORDERS if o[1] in japanese and o[2] > 5]
    expected_customers = [c for c in CUSTOMERS if c[0] in japanese]
    assert done.result_count == len(expected_orders) + len(expected_customers)
    values = sorted((tuple(r["value"].values()) for r in _records(done)), key=repr)
    assert values == sorted([*expected_orders, *expected_customers], key=repr)
    assert sorted(p["kind"] for p in done.summary["points"]) == ["combiner", "input", "input", "output"]

    source = next(c for c in combiner.parent_capture_ids if points[c].capture_id.endswith("read.parquet"))
    forward = ask_trace(app, by=analyst, direction="forward", capture_point=source,
                        selection={"predicate": {"field": "order_id", "op": "in", "value": [6, 7]}},
                        seeds=Trace.objects.all())
    done = run_trace(forward.pk)
    assert done is not None and done.status == "succeeded", done and done.error
    countries = {next(c[1] for c in CUSTOMERS if c[0] == ORDERS[i][1]) for i in (6, 7)}
    assert sorted(r["value"]["country"] for r in _records(done)) == sorted(countries)
