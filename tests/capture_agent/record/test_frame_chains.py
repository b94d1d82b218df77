"""Traces through Parquet a captured DataFrame wrote and another captured DataFrame read (issue 14,
section 2): in one run and across runs (``storage.chains``), backward and forward, against oracles
computed from the rows themselves; part files split by ``maxRecordsPerFile`` and files the
captured write did not make (an uncaptured append) included."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.spark

ORDERS = [(i, f"c{i % 7}", float(i % 13)) for i in range(150)]
SCHEMA = "order_id long, customer_id string, amount double"


def _rows(values: list[Any]) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(v) for v in values)


@pytest.fixture
def orders(spark: Any, tmp_path: Path) -> str:
    path = str(tmp_path / "orders")
    spark.createDataFrame(ORDERS, SCHEMA).repartition(3).write.parquet(path)
    return path


def _clean(frame: Any) -> Any:
    """The first job: orders over 3, amounts doubled, in 4 partitions."""
    from pyspark.sql import functions as F

    return frame.where(F.col("amount") > 3).withColumn("amount", F.col("amount") * 2).repartition(4)


def _totals(frame: Any) -> Any:
    from pyspark.sql import functions as F

    return frame.groupBy("customer_id").agg(F.sum("amount").alias("total"), F.count("*").alias("n"))


def test_a_trace_crosses_from_the_reading_run_into_the_writing_run_and_back(spark, tmp_path, orders):
    from capture_agent.record import LineageContext, LineageRun

    store, cleaned = str(tmp_path / "store"), str(tmp_path / "cleaned")
    first = LineageContext(spark, store=store)
    _clean(first.read.parquet(orders)).write.mode("overwrite").parquet(cleaned)
    second = LineageContext(spark, store=store)
    totals = _totals(second.read.parquet(cleaned))
    got = {r.customer_id: r for r in totals.collect()}
    assert {k: (r.total, r.n) for k, r in got.items()} == \
        {r.customer_id: (r.total, r.n) for r in _totals(_clean(spark.read.parquet(orders))).collect()}

    chained = LineageRun(second.run_dir, chain=True)
    assert set(chained.chained_apps) == {first.store.run_id, second.store.run_id}
    [out] = [p for p in chained.outputs() if "/" not in p.capture_id]  # the reader's own output
    expected = [o for o in ORDERS if o[1] == "c3" and o[2] > 3]
    behind = chained.lineage(out).filter(lambda r: r.customer_id == "c3").goBackAll()
    assert _rows(behind.collect()) == _rows(expected)  # the first job's source rows, not the cleaned ones
    assert {p.source.rsplit("/", 1)[0] for p in behind.positions()} == {"file://" + orders}
    alone = LineageRun(second.run_dir).lineage(LineageRun(second.run_dir).outputs()[-1])
    stops = alone.filter(lambda r: r.customer_id == "c3").goBackAll().collect()
    assert _rows(stops) == _rows([(o[0], o[1], o[2] * 2) for o in expected])  # unchained: the cleaned rows

    upstream = LineageRun(first.run_dir, chain=True)
    [source] = [p for p in upstream.capture_points() if p.kind == "input" and "/" not in p.capture_id]
    reached = upstream.lineage(source).filter(lambda r: r.order_id in (10, 11, 13)).goNextAll().collect()
    # order 10 (c3, 10.0) and 11 (c4, 11.0) are kept; 13 (c6, 0.0) is dropped by the first job
    assert sorted(r.customer_id for r in reached if hasattr(r, "total")) == ["c3", "c4"]


def test_part_files_split_by_max_records_and_files_of_an_uncaptured_append(spark, tmp_path, lc, orders):
    from pyspark.sql import functions as F

    cleaned = str(tmp_path / "cleaned")
    (_clean(lc.read.parquet(orders)).write.mode("overwrite").option("maxRecordsPerFile", 9)
     .parquet(cleaned))
    assert any(name.endswith(".parquet") and "-c001" in name for name in _names(cleaned))
    extra = [(1000 + i, "c3", 50.0) for i in range(5)]
    spark.createDataFrame(extra, SCHEMA).write.mode("append").parquet(cleaned)  # not captured

    reread = lc.read.parquet(cleaned)
    totals = _totals(reread)
    got = {r.customer_id: (r.total, r.n) for r in totals.collect()}
    assert got == {r.customer_id: (r.total, r.n) for r in _totals(spark.read.parquet(cleaned)).collect()}
    behind = _rows(totals.getLineage().filter(lambda r: r.customer_id == "c3").goBackAll().collect())
    # captured rows go on to the orders they came from; the appended rows are sources themselves
    assert behind == _rows([o for o in ORDERS if o[1] == "c3" and o[2] > 3] + extra)
    # forward from an order: through the write and the re-read, into c3's total only
    [source] = [p for p in lc.store.points.values() if p.kind == "input" and p.op == "read.parquet"
                and "orders" in p.layout.paths[0]]
    from capture_agent.record import LineageRun

    run = LineageRun(lc.run_dir)
    reached = run.lineage(run.store.point(source.capture_id)).filter(lambda r: r.order_id == 10).goNextAll()
    assert [tuple(r) for r in reached.collect() if hasattr(r, "total")] == [("c3", *got["c3"])]
    one = reread.where(F.col("order_id") == 10)
    assert [tuple(r) for r in one.collect()] == [(10, "c3", 20.0)]
    assert [tuple(r) for r in one.getLineage().goBack().collect()] == [(10, "c3", 20.0)]  # the re-read row
    at_write = one.getLineage().goBack().goBack()
    assert [tuple(r) for r in at_write.collect()] == [(10, "c3", 20.0)]  # read back from the part file
    [position] = at_write.positions()
    assert position.source.rsplit("/", 1)[-1].startswith("part-") and position.offset < 9
    assert [tuple(r) for r in at_write.goBack().collect()] == [ORDERS[10]]


def _names(folder: str) -> list[str]:
    return [p.name for p in Path(folder).iterdir()]


def test_a_what_if_goes_through_the_written_parquet(spark, tmp_path, lc, orders):
    """Deleting orders at the first job's source: the re-read rows they wrote die with them, and
    the totals of the second job die or change as the remaining orders decide."""
    cleaned = str(tmp_path / "cleaned")
    source = lc.read.parquet(orders)
    _clean(source).write.parquet(cleaned)
    totals = _totals(lc.read.parquet(cleaned))
    totals.collect()
    doomed = source.getLineage().filter(lambda r: r.customer_id == "c3" or r.order_id == 4)
    impact = doomed.whatIfDeleted(totals)
    assert [r.customer_id for r in impact.dead()] == ["c3"]
    assert [r.customer_id for r in impact.reached()] == ["c4"]  # order 4 (c4, 4.0) is kept by the first job


def test_reading_the_same_files_twice_starts_two_traces(lc, orders):
    """Two captured reads of the same Parquet files in one run: neither is the other's parent (only
    a captured write's part files chain), and each traces to the files' own rows."""
    first, second = lc.read.parquet(orders), lc.read.parquet(orders)
    assert first._point != second._point and lc.store.point(second._point).parents == []
    totals = _totals(second)
    totals.collect()
    behind = _rows(totals.getLineage().filter(lambda r: r.customer_id == "c2").goBackAll().collect())
    assert behind == _rows([o for o in ORDERS if o[1] == "c2"])
