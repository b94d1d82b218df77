"""Unmodified DataFrame and SQL jobs captured by configuration (``capture.implicit``,
``capture.frame_plan``): each action's answer is plain PySpark's, and traces both ways equal
oracles computed from the tables; a query the rewrite refuses runs plain and is reported."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.capture_agent.record.test_dataframes import CUSTOMER_SCHEMA, CUSTOMERS, ORDERS

pytestmark = pytest.mark.spark


@pytest.fixture
def records(spark: Any, tmp_path: Path, tables: dict[str, str]) -> Iterator[Any]:
    """Records switched on for the session (the implicit LineageContext), with the tables as
    views read the plain way: spark.read.parquet, createDataFrame."""
    from capture_agent.record.capture import implicit

    lc = implicit.enable_records(spark, str(tmp_path / "lineage"))
    spark.read.parquet(tables["orders"]).createOrReplaceTempView("orders")
    spark.createDataFrame(CUSTOMERS, CUSTOMER_SCHEMA).createOrReplaceTempView("customers")
    yield lc
    implicit.disable_records(spark)


def plain_rows(df: Any) -> Counter[tuple[Any, ...]]:
    from capture_agent.record.capture.implicit_guard import uncaptured

    with uncaptured():
        return Counter(tuple(r) for r in df.collect())


def output(lc: Any) -> Any:
    """The LineageRDD at the last action's output."""
    last = [p for p in lc.store.by_seq() if p.kind == "output"][-1]
    return lc.lineage(last.capture_id)


def source(lc: Any, op: str) -> Any:
    """The LineageRDD at the last input point of ``op`` (read.parquet, createDataFrame)."""
    last = [p for p in lc.store.by_seq() if p.kind == "input" and p.op == op][-1]
    return lc.lineage(last.capture_id)


def counted(values: Any) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(v) for v in values)


def customer(cid: str) -> tuple[Any, ...]:
    return next(c for c in CUSTOMERS if c[0] == cid)


def test_a_sql_join_aggregate_is_captured_unmodified_both_ways(records: Any, spark: Any) -> None:
    query = spark.sql("""SELECT c.country, sum(o.amount) AS total, count(*) AS n
                         FROM orders o JOIN customers c ON o.customer_id = c.customer_id
                         WHERE o.amount > 3 GROUP BY c.country""")
    got = query.collect()  # the user's own call: captured
    assert counted(got) == plain_rows(query)
    for row in got:
        ids = {c[0] for c in CUSTOMERS if c[1] == row.country}
        kept = [o for o in ORDERS if o[1] in ids and o[2] > 3]
        assert row.total == sum(o[2] for o in kept)
        matched = [customer(c) for c in sorted({o[1] for o in kept})]
        traced = output(records).filter(lambda r, country=row.country: r.country == country).goBackAll().collect()
        assert counted(traced) == counted(kept + matched)
    # forward: one customer's row reaches its country's total, and nothing else
    first = CUSTOMERS[0]
    reached = source(records, "createDataFrame").filter(lambda r: r.customer_id == first[0]).goNextAll().collect()
    assert [r.country for r in reached] == [first[1]]
    # a what-if pairs the aggregate's old and new rows by its group column (``frame_plan.group_keys``)
    last = [p for p in records.store.by_seq() if p.kind == "output"][-1]
    assert last.layout.keys == ["country"]
    gone = [o for o in ORDERS if o[1] == "c1" and o[2] > 3][0]
    impact = source(records, "read.parquet").filter(lambda r: tuple(r) == gone).whatIfDeleted(last.capture_id)
    country = customer("c1")[1]
    old, new = next(pair for pair in impact.changed() if pair[0].country == country)
    assert (new.country, new.total, new.n) == (country, old.total - gone[2], old.n - 1)


@pytest.mark.parametrize("query, pick, oracle", [
    # IN (a left semi join): the order and the customer it matched
    ("SELECT * FROM orders WHERE customer_id IN (SELECT customer_id FROM customers WHERE country = 'FR')",
     lambda r: r.order_id == 1, lambda: [ORDERS[1], customer(ORDERS[1][1])]),
    # EXISTS under OR (an existence join)
    ("SELECT order_id FROM orders o WHERE o.amount > 11 OR EXISTS "
     "(SELECT 1 FROM customers c WHERE c.customer_id = o.customer_id AND c.segment = 'seg0')",
     lambda r: r.order_id == 2, lambda: [ORDERS[2], customer(ORDERS[2][1])]),
    # a running window: the row and the one before it of its customer
    ("SELECT order_id, sum(amount) OVER (PARTITION BY customer_id ORDER BY order_id "
     "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM orders",
     lambda r: r.order_id == 15, lambda: [ORDERS[8], ORDERS[15]]),
    # ROLLUP (an expand): the grand total's row is every order
    ("SELECT customer_id, count(*) AS n FROM orders GROUP BY ROLLUP (customer_id)",
     lambda r: r.customer_id is None, lambda: ORDERS),
    # INTERSECT (a semi join on null-safe equality, then distinct)
    ("SELECT customer_id FROM orders INTERSECT SELECT customer_id FROM customers WHERE country = 'US'",
     lambda r: r.customer_id == "c2", lambda: [o for o in ORDERS if o[1] == "c2"] + [customer("c2")]),
    # EXCEPT (an anti join): a row's lineage is its own side's
    ("SELECT customer_id FROM orders EXCEPT SELECT customer_id FROM customers WHERE country = 'JP'",
     lambda r: r.customer_id == "c1", lambda: [o for o in ORDERS if o[1] == "c1"]),
    # a CTE used twice, BETWEEN and a date interval
    ("WITH t AS (SELECT customer_id, max(amount) AS m FROM orders "
     "WHERE amount BETWEEN 2 AND 9 AND CAST(day AS DATE) + INTERVAL 1 DAY > DATE'2026-01-01' GROUP BY customer_id) "
     "SELECT a.customer_id, a.m FROM t a JOIN t b ON a.customer_id = b.customer_id",
     lambda r: r.customer_id == "c3", lambda: [o for o in ORDERS if o[1] == "c3" and 2 <= o[2] <= 9]),
    # an outer join: a customer without orders over 11 keeps its own row only
    ("SELECT c.customer_id, o.order_id FROM customers c LEFT JOIN (SELECT * FROM orders WHERE amount > 11) o "
     "ON c.customer_id = o.customer_id",
     lambda r: r.order_id == 12, lambda: [ORDERS[12], customer(ORDERS[12][1])]),
])
def test_sql_operators_trace_to_their_oracle(records: Any, spark: Any, query: str, pick: Any, oracle: Any) -> None:
    df = spark.sql(query)
    got = df.collect()
    assert counted(got) == plain_rows(df)
    assert any(pick(r) for r in got)
    traced = output(records).filter(pick).goBackAll().collect()
    assert counted(traced) == counted(oracle())


def test_a_table_read_twice_is_one_source_read_again(records: Any, spark: Any) -> None:
    """A self-join (two leaves reading the same files the same way), then another action reading
    them so: one input point, the later leaves read again by its reader, each use traced."""
    pairs = spark.sql("SELECT a.order_id AS first, b.order_id AS second FROM orders a JOIN orders b "
                      "ON a.customer_id = b.customer_id AND a.order_id + 7 = b.order_id")
    got = pairs.collect()
    assert counted(got) == plain_rows(pairs) and got
    pair = min(got)
    traced = output(records).filter(lambda r: r.first == pair.first).goBackAll().collect()
    assert counted(traced) == counted([ORDERS[pair.first], ORDERS[pair.second]])
    few = spark.sql("SELECT order_id, customer_id FROM orders WHERE order_id < 10")
    assert counted(few.collect()) == plain_rows(few)
    reads = [p for p in records.store.by_seq() if p.kind == "input" and p.op == "read.parquet"]
    assert len(reads) == 1 and len(records.frames.remakes) == 1  # the later leaves were read again
    # one order reaches its rows in both actions' outputs: both sides of the pairs, and the filter's
    reached = source(records, "read.parquet").filter(lambda r: r.order_id == pair.first).goNextAll().collect()
    expected = [(r.first, r.second) for r in got if pair.first in (r.first, r.second)]
    expected.append((pair.first, ORDERS[pair.first][1]))
    assert counted(reached) == counted(expected)


def test_dataframe_methods_count_to_pandas_and_write(records: Any, spark: Any, tables: dict[str, str],
                                                     tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    orders = spark.read.parquet(tables["orders"])
    big = orders.where(F.col("amount") > 10).groupBy("customer_id").agg(F.sum("amount").alias("s"))
    assert big.count() == len({o[1] for o in ORDERS if o[2] > 10})
    assert [p.op for p in records.store.by_seq() if p.kind == "output"][-1] == "count"
    pandas = big.toPandas()
    assert sorted(pandas["customer_id"]) == sorted({o[1] for o in ORDERS if o[2] > 10})
    folder = str(tmp_path / "out")
    big.write.mode("overwrite").parquet(folder)
    written = [p for p in records.store.by_seq() if p.kind == "output"][-1]
    assert written.op.startswith("write") and written.layout.name == "frame_write"
    assert sorted(r.customer_id for r in spark.read.parquet(folder).collect()) == sorted(pandas["customer_id"])


def test_a_scalar_subquery_gives_its_rows_to_the_rows_it_filtered(records: Any, spark: Any) -> None:
    df = spark.sql("SELECT order_id, amount - (SELECT min(amount) FROM orders WHERE amount > 5) AS over "
                   "FROM orders WHERE amount > (SELECT avg(amount) + 4 FROM orders)")
    got = df.collect()
    assert counted(got) == plain_rows(df)
    average = sum(o[2] for o in ORDERS) / len(ORDERS)
    assert {r.order_id for r in got} == {o[0] for o in ORDERS if o[2] > average + 4}
    traced = output(records).filter(lambda r: r.order_id == got[0].order_id).goBackAll().collect()
    assert counted(traced) == counted(ORDERS)  # the row, and every order the average and the minimum read


def test_a_query_the_rewrite_refuses_runs_plain_and_is_reported_by_operator(records: Any, spark: Any) -> None:
    from pyspark.sql import functions as F

    orders = spark.table("orders")
    df = orders.groupBy("customer_id").applyInPandas(lambda pdf: pdf.head(1), orders.schema)
    before = len([p for p in records.store.by_seq() if p.kind == "output"])
    got = df.collect()
    assert counted(got) == plain_rows(df) and len(got) == len({o[1] for o in ORDERS})
    assert df.where(F.col("amount") > 100).count() == 0
    assert len([p for p in records.store.by_seq() if p.kind == "output"]) == before  # no output point
    manifest = json.loads((Path(records.store.run_dir) / "run.json").read_text())
    actions = [(e["action"], e["reason"]) for e in manifest["not_captured"]]
    assert [a for a, _ in actions] == ["collect", "count"]
    assert all("FlatMapGroupsInPandas" in why for _, why in actions)


def test_a_cached_frame_is_captured_from_its_sources(records: Any, spark: Any) -> None:
    """A cached frame (df.cache(), the job's plain queries read the cache) is captured as the query
    that filled it: answers equal plain Spark's, traces reach the rows of the tables it read."""
    from pyspark.sql import functions as F

    big = spark.table("orders").where(F.col("amount") > 3).join(spark.table("customers"), "customer_id").cache()
    assert big.count() == sum(1 for o in ORDERS if o[2] > 3)
    totals = big.groupBy("country").agg(F.sum("amount").alias("total"))
    got = totals.collect()
    assert counted(got) == plain_rows(totals)
    assert not json.loads((Path(records.store.run_dir) / "run.json").read_text()).get("not_captured")
    for row in got:
        ids = {c[0] for c in CUSTOMERS if c[1] == row.country}
        kept = [o for o in ORDERS if o[1] in ids and o[2] > 3]
        traced = output(records).filter(lambda r, country=row.country: r.country == country).goBackAll().collect()
        assert counted(traced) == counted(kept + [customer(c) for c in sorted({o[1] for o in kept})])
    big.unpersist()


# the right side of the EXISTS: rows (nested with their ids), groups of a tapped aggregate (nested
# with the groups' ids), rows that carry a set (an IN's customers: grouped, each group with its sets)
EXISTS_RIGHT = {
    "rows": "orders p WHERE p.order_id < 40 AND ",
    "groups": "(SELECT customer_id, amount FROM orders WHERE order_id < 40 GROUP BY customer_id, amount) p WHERE ",
    "sets": "orders p WHERE p.order_id < 40 AND p.customer_id IN (SELECT customer_id FROM customers) AND ",
}


@pytest.mark.parametrize("side", sorted(EXISTS_RIGHT))
@pytest.mark.parametrize("under_or", [False, True])
def test_exists_on_a_condition_other_than_equal_keys(records: Any, spark: Any, under_or: bool, side: str) -> None:
    """EXISTS comparing a right column by <> beside an equal one (TPC-DS 16 and 94): a left row
    matches several right rows (or groups) of its customer, and traces to every right row it
    matched; under OR (an existence join) a row kept by the other side of the OR has no match and
    its own row only."""
    other = "o.amount > 11 OR " if under_or else ""
    df = spark.sql(f"SELECT o.order_id FROM orders o WHERE {other}EXISTS (SELECT 1 FROM {EXISTS_RIGHT[side]}"
                   "p.customer_id = o.customer_id AND p.amount <> o.amount AND p.customer_id <> 'c0')")
    plan = str(df._jdf.queryExecution().optimizedPlan().toString())
    # the subquery's aggregate, or the IN's semi join, stays below the EXISTS's join
    assert plan.count("Aggregate") == (side == "groups")
    assert plan.count("LeftSemi") == (side == "sets") + (not under_or)
    got = df.collect()
    assert counted(got) == plain_rows(df)
    assert not json.loads((Path(records.store.run_dir) / "run.json").read_text()).get("not_captured")
    mine = ORDERS[40]
    matched = [p for p in ORDERS if p[1] == mine[1] and p[2] != mine[2] and p[0] < 40]
    assert len({p[2] for p in matched}) > 1 and any(r.order_id == mine[0] for r in got)
    traced = output(records).filter(lambda r: r.order_id == mine[0]).goBackAll().collect()
    assert counted(traced) == counted([mine, *matched] + ([customer(mine[1])] if side == "sets" else []))
    # forward: one right row reaches the left rows of its customer whose amount differs
    right = matched[0]
    reached = source(records, "read.parquet").filter(lambda r: tuple(r) == right).goNextAll().collect()
    kept = {r.order_id for r in got}
    assert {r.order_id for r in reached} == {o[0] for o in ORDERS if o[0] in kept and o[1] == right[1]
                                             and o[2] != right[2]} | {right[0]} & kept
    if under_or:  # c0's order of amount 12, kept by the OR's other side: no right row matched it
        alone = next(o for o in ORDERS if o[1] == "c0" and o[2] > 11)
        traced = output(records).filter(lambda r: r.order_id == alone[0]).goBackAll().collect()
        assert counted(traced) == counted([alone])


@pytest.mark.parametrize("under_or", [False, True])
def test_exists_on_no_equal_key_regroups_each_row_with_every_row_it_matched(records: Any, spark: Any,
                                                                           under_or: bool) -> None:
    """EXISTS whose condition compares no right column equal to the left row (a nested loop join):
    each left row is numbered, joined with every right row it matches and grouped again, so it
    traces to its own row and each of those; under OR (an existence join) a row kept by the other
    side of the OR matched none and traces to its own row only."""
    from capture_agent.record.capture.frame_plan import captured_query

    other = "o.amount > 11 OR " if under_or else ""
    df = spark.sql(f"SELECT o.order_id FROM orders o WHERE {other}EXISTS (SELECT 1 FROM orders p "
                   "WHERE p.order_id < 12 AND p.amount > o.amount + 9)")
    got = df.collect()
    assert counted(got) == plain_rows(df)
    assert not json.loads((Path(records.store.run_dir) / "run.json").read_text()).get("not_captured")
    right = [p for p in ORDERS if p[0] < 12]
    matches = {o[0]: [p for p in right if p[2] > o[2] + 9] for o in ORDERS}
    kept = {o[0] for o in ORDERS if matches[o[0]] or (under_or and o[2] > 11)}
    assert {r.order_id for r in got} == kept
    for mine in (ORDERS[13], ORDERS[14]) + ((ORDERS[12],) if under_or else ()):  # amounts 0, 1; 12
        assert len(matches[mine[0]]) == {0: 2, 1: 1, 12: 0}[int(mine[2])]
        traced = output(records).filter(lambda r, o=mine[0]: r.order_id == o).goBackAll().collect()
        assert counted(traced) == counted([mine, *matches[mine[0]]])
    # forward: the right row of amount 11 reaches every kept row it matched (amounts 0 and 1)
    eleven = ORDERS[11]
    reached = source(records, "read.parquet").filter(lambda r: tuple(r) == eleven).goNextAll().collect()
    assert {r.order_id for r in reached} == {o for o in kept if eleven in matches[o]}
    plan = str(captured_query(records, df)._df._jdf.queryExecution().optimizedPlan().toString())
    assert "monotonically_increasing_id" in plan and "collect_list" not in plan


def _first(node: Any, predicate: Any) -> Any:
    """The first node of a Catalyst plan, depth first, that ``predicate`` holds for (or None)."""
    if predicate(node):
        return node
    children = node.children()
    for i in range(children.size()):
        found = _first(children.apply(i), predicate)
        if found is not None:
            return found
    return None


def test_an_exists_beside_equal_keys_is_matched_after_the_joins_that_keep_fewer_rows(records: Any,
                                                                                   spark: Any) -> None:
    """Spark pushes the EXISTS down to the table it reads, below the join with customers that keeps
    a third of the orders (TPC-DS 16 and 94: below three dimensions); the rewrite matches each row
    it is given, so the capture puts it back above that join (LateSemiJoins): same answer, every
    row traced to its own rows, its customer and the right rows it matched."""
    from capture_agent.record.capture.frame_plan import captured_query

    df = spark.sql("SELECT o.order_id, c.country FROM orders o JOIN customers c ON o.customer_id = c.customer_id "
                   "WHERE c.country = 'US' AND EXISTS (SELECT 1 FROM orders p WHERE p.order_id < 40 AND "
                   "p.customer_id = o.customer_id AND p.amount <> o.amount)")
    plain_plan = df._jdf.queryExecution().optimizedPlan()
    semi = _first(plain_plan, lambda n: n.nodeName() == "Join" and "LeftSemi" in str(n.joinType()))
    assert "Join Inner" not in str(semi.children().apply(0).toString())  # Spark's: below the join
    got = df.collect()
    assert counted(got) == plain_rows(df)
    assert not json.loads((Path(records.store.run_dir) / "run.json").read_text()).get("not_captured")
    us = {c[0] for c in CUSTOMERS if c[1] == "US"}
    for mine in (ORDERS[40], ORDERS[47]):
        matched = [p for p in ORDERS if p[1] == mine[1] and p[2] != mine[2] and p[0] < 40]
        assert mine[1] in us and matched and any(r.order_id == mine[0] for r in got)
        traced = output(records).filter(lambda r, o=mine[0]: r.order_id == o).goBackAll().collect()
        assert counted(traced) == counted([mine, *matched, customer(mine[1])])
    right = ORDERS[5]  # c5's order of amount 5: every US order of c5 of another amount matched it
    reached = source(records, "read.parquet").filter(lambda r: tuple(r) == right).goNextAll().collect()
    assert {r.order_id for r in reached} == {o[0] for o in ORDERS if o[1] == right[1] and o[2] != right[2]} | {5}
    captured = captured_query(records, df)._df._jdf.queryExecution().optimizedPlan()
    matching = _first(captured, lambda n: n.nodeName() == "Join" and "NOT (" in str(n.toString()).splitlines()[0])
    assert "Join Inner" in str(matching.children().apply(0).toString())  # the capture's: above it


def test_a_join_side_spark_would_broadcast_is_broadcast_in_the_capture(records: Any, spark: Any) -> None:
    """The rewritten join asks for the broadcast Spark plans for the join as written (Broadcasts):
    the side's ids and sets would count in its estimated size and could take it past the
    threshold (TPC-DS 70: a shuffle of a year of store_sales). With broadcasts off, no hint."""
    from capture_agent.record.capture.frame_plan import captured_query

    text = ("SELECT o.order_id, c.country FROM orders o JOIN (SELECT country, min(customer_id) AS customer_id "
            "FROM customers GROUP BY country) c ON o.customer_id = c.customer_id")

    def hints() -> list[str]:
        plan = captured_query(records, spark.sql(text))._df._jdf.queryExecution().optimizedPlan()
        join = _first(plan, lambda n: n.nodeName() == "Join")
        return [str(join.hint().leftHint()), str(join.hint().rightHint())]

    df = spark.sql(text)
    assert counted(df.collect()) == plain_rows(df)
    plain = str(df._jdf.queryExecution().executedPlan().toString())  # Spark's plan of the join as written
    side = "BuildLeft" if "BuildLeft" in plain else "BuildRight"
    assert "BroadcastHashJoin" in plain and side in plain
    broadcast = "Some((strategy=broadcast))"
    assert hints() == ([broadcast, "None"] if side == "BuildLeft" else ["None", broadcast])
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", "-1")
    try:
        assert hints() == ["None", "None"]
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")


@pytest.mark.parametrize("rows, asked", [(200, True), (5000, False)])
def test_a_join_side_carrying_sets_is_broadcast_only_when_it_has_few_rows(records: Any, spark: Any, rows: int,
                                                                         asked: bool) -> None:
    """A side whose rows carry sets (here a running window's: a row and the one before it) is asked
    for as the broadcast only at 1,000 rows or fewer by Spark's estimate (Broadcasts.SET_ROWS): the
    sets' bytes are not in the estimate, and many rows can carry the same large set (TPC-DS 14's
    items before an IN's groups were tapped: a broadcast the driver could not build). Spark
    broadcasts that side in the join as written, at both sizes."""
    from capture_agent.record.capture.frame_plan import captured_query

    spark.range(20000).createOrReplaceTempView("wide_keys")
    spark.range(rows).createOrReplaceTempView("kept_keys")
    text = ("SELECT w.id, k.id AS kept FROM wide_keys w JOIN (SELECT id FROM (SELECT id, sum(id) OVER "
            "(PARTITION BY id % 10 ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM kept_keys) "
            "WHERE s >= 0) k ON w.id = k.id")
    df = spark.sql(text)
    assert "BuildRight" in str(df._jdf.queryExecution().executedPlan().toString())
    assert counted(df.collect()) == plain_rows(df)
    plan = captured_query(records, spark.sql(text))._df._jdf.queryExecution().optimizedPlan()
    join = _first(plan, lambda n: n.nodeName() == "Join")  # the first, depth first: wide_keys with the kept keys
    assert (str(join.hint().rightHint()) == "Some((strategy=broadcast))") == asked


def test_an_aggregate_read_twice_is_computed_once_as_plain(records: Any, spark: Any) -> None:
    """A CTE's aggregate joined with itself: its two copies take one tap (one combiner point), so
    the rewritten copies stay the same plan and Spark computes the aggregate once, its exchange
    reused, as it does plain; with a tap each, the orders were read and aggregated twice."""
    from capture_agent.record.capture.frame_plan import captured_query

    text = ("WITH t AS (SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id) "
            "SELECT a.customer_id, a.total, b.total AS again FROM t a JOIN t b ON a.customer_id = b.customer_id")
    df = spark.sql(text)
    before = {p.capture_id for p in records.store.by_seq() if p.kind == "combiner"}
    got = df.collect()  # captured
    assert counted(got) == plain_rows(df)
    assert "ReusedExchange" in str(df._jdf.queryExecution().executedPlan().toString())  # plain, as written
    taps = [p for p in records.store.by_seq() if p.kind == "combiner" and p.capture_id not in before]
    assert len(taps) == 1
    traced = output(records).filter(lambda r: r.customer_id == "c3").goBackAll().collect()
    assert counted(traced) == counted([o for o in ORDERS if o[1] == "c3"])
    rewritten = captured_query(records, spark.sql(text))._df
    plain_rows(rewritten)  # the rewritten query run as it is
    assert "ReusedExchange" in str(rewritten._jdf.queryExecution().executedPlan().toString())


def test_a_subquery_in_each_branch_of_a_union_is_read_once_as_plain(records: Any, spark: Any) -> None:
    """A CTE's aggregate in both branches of a UNION (TPC-DS 36's levels of a rollup written out):
    Spark reads the orders once and reuses the exchange, captured as plain. The union's first
    branch keeps the aliases above its reads (its output is the union's), so a source given the
    leaf's columns under aliases planned that branch apart from the other, and the orders were
    read twice."""
    from capture_agent.record.capture.frame_plan import captured_query

    text = ("WITH t AS (SELECT customer_id, sum(amount) AS total FROM orders GROUP BY customer_id) "
            "SELECT customer_id, total FROM t UNION ALL SELECT 'all' AS customer_id, sum(total) FROM t")
    df = spark.sql(text)
    got = df.collect()  # captured
    assert counted(got) == plain_rows(df)
    assert "ReusedExchange" in str(df._jdf.queryExecution().executedPlan().toString())  # plain, as written
    for who, orders in (("c3", [o for o in ORDERS if o[1] == "c3"]), ("all", ORDERS)):
        traced = output(records).filter(lambda r, who=who: r.customer_id == who).goBackAll().collect()
        assert counted(traced) == counted(orders)
    rewritten = captured_query(records, spark.sql(text))._df
    plain_rows(rewritten)  # the rewritten query run as it is
    plan = str(rewritten._jdf.queryExecution().executedPlan().toString())
    assert "ReusedExchange" in plan
    assert plan.split("== Initial Plan ==")[0].count("BatchScan") == 1  # the orders read once


@pytest.mark.parametrize("text, reach", [
    ("SELECT * FROM orders WHERE customer_id IN (SELECT customer_id FROM customers WHERE country = 'US')", {"c2"}),
    ("SELECT customer_id FROM orders INTERSECT SELECT customer_id FROM customers WHERE country = 'US'", {"c2"}),
    # under OR: an existence join, whose rows kept by the other side may match no group
    ("SELECT * FROM orders WHERE amount > 11 OR customer_id IN (SELECT customer_id FROM customers "
     "WHERE country = 'US')", {"c2"}),
    # the subquery's rows carry sets (a running window's: a US customer and the one before it, c2 before
    # c5), whose ids the tap adds one by one: c2 reaches c5's orders too
    ("SELECT * FROM orders WHERE customer_id IN (SELECT customer_id FROM (SELECT customer_id, country, count(*) "
     "OVER (PARTITION BY country ORDER BY customer_id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS n "
     "FROM customers) WHERE country = 'US' AND n > 0)", {"c2", "c5"}),
], ids=["in", "intersect", "in-under-or", "in-over-sets"])
def test_an_in_subquery_is_tapped_both_ways(records: Any, spark: Any, text: str, reach: set[str]) -> None:
    """An IN (or INTERSECT) matched on equal keys: the subquery's rows are grouped by the compared
    columns through a tap (SemiJoinIds), so a kept row holds its group's id in a combiner point, not
    a copy of its group's set (TPC-DS 14 copied such sets into every store_sales row it kept; in 70
    the sets of a rank); traces go through the point to the customers matched, both ways."""
    from capture_agent.record.capture.frame_plan import captured_query

    df = spark.sql(text)
    got = df.collect()
    assert counted(got) == plain_rows(df)
    mine = next(o for o in ORDERS if o[1] == "c2" and o[2] <= 11)  # c2: US, the first by id
    traced = output(records).filter(lambda r: r.customer_id == "c2" and getattr(r, "order_id", mine[0]) == mine[0])
    orders = [mine] if "order_id" in df.columns else [o for o in ORDERS if o[1] == "c2"]
    assert counted(traced.goBackAll().collect()) == counted(orders + [customer("c2")])
    reached = source(records, "createDataFrame").filter(lambda r: r.customer_id == "c2").goNextAll().collect()
    assert counted(reached) == counted(r for r in got if r.customer_id in reach)
    assert not any(slot.is_set for slot in captured_query(records, spark.sql(text))._slots)


def _witnesses(kept: Any, same: Any) -> dict[int, set[int]]:
    """For each order of ``kept`` (a predicate of one order), the orders a self-join pairs it with
    (``same``: a predicate of two orders) and itself, when there is any such pair."""
    out: dict[int, set[int]] = {}
    for a in ORDERS:
        pairs = {b[0] for b in ORDERS if same(a, b)}
        if kept(a) and pairs:
            out[a[0]] = pairs | {a[0]}
    return out


def _as_order(order_id: int) -> tuple[Any, ...]:
    return next(o for o in ORDERS if o[0] == order_id)


@pytest.mark.parametrize("shape", ["in", "aggregate", "rows", "groups"])
def test_a_table_joined_with_itself_carries_both_ids_as_a_list(records: Any, spark: Any, shape: str) -> None:
    """A source read on both sides of a join: its rows carry the two ids as a list, which a tap
    adds one by one (the IN's and the aggregate's here), not a set made and united for each row
    (TPC-DS 95's pairs of lines of one order: 2.3x plain, then under 1x); where nothing takes the
    list it is a set at the end. Traces both ways against the tables."""
    from capture_agent.record.capture.frame_plan import captured_query

    same_customer = "a.customer_id = b.customer_id"
    lineage: dict[Any, set[int]]  # an output row's key -> its orders
    if shape == "in":  # the orders whose customer has an order on another day
        text = (f"SELECT * FROM orders WHERE order_id IN (SELECT a.order_id FROM orders a JOIN orders b "
                f"ON {same_customer} AND a.day <> b.day)")
        lineage = _witnesses(lambda a: True, lambda a, b: a[1] == b[1] and a[3] != b[3])
        key = "order_id"
    elif shape == "aggregate":  # per customer, its pairs of orders
        text = (f"SELECT a.customer_id, count(*) AS n FROM orders a JOIN orders b ON {same_customer} "
                f"AND a.order_id < b.order_id GROUP BY a.customer_id")
        lineage = {cid: {o[0] for o in ORDERS if o[1] == cid} for cid in {o[1] for o in ORDERS}}
        key = "customer_id"
    elif shape == "groups":  # pairs of customers with as many orders: a tapped aggregate's two copies
        text = ("WITH t AS (SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id) "
                "SELECT a.customer_id AS a_id, b.customer_id AS b_id FROM t a JOIN t b "
                "ON a.n = b.n AND a.customer_id < b.customer_id")
        of = {cid: {o[0] for o in ORDERS if o[1] == cid} for cid in {o[1] for o in ORDERS}}
        lineage = {(a, b): of[a] | of[b] for a in of for b in of if a < b and len(of[a]) == len(of[b])}
        key = "pair"
    else:  # the pairs themselves, each to its two orders
        text = ("SELECT a.order_id AS a_id, b.order_id AS b_id FROM orders a JOIN orders b "
                "ON a.customer_id = b.customer_id AND a.amount = b.amount + 12")
        got_pairs = [(a[0], b[0]) for a in ORDERS for b in ORDERS if a[1] == b[1] and a[2] == b[2] + 12]
        lineage = {pair: set(pair) for pair in got_pairs}
        key = "pair"
    before = {p.capture_id for p in records.store.by_seq() if p.kind == "combiner"}
    df = spark.sql(text)
    got = df.collect()
    assert counted(got) == plain_rows(df)
    assert len(got) == len(lineage) > 0
    taps = [p for p in records.store.by_seq() if p.kind == "combiner" and p.capture_id not in before]
    assert len(taps) == (0 if shape == "rows" else 1)  # the two copies of "groups"' aggregate: one

    def key_of(r: Any) -> Any:
        return (r.a_id, r.b_id) if key == "pair" else getattr(r, key)

    for wanted in sorted(lineage)[:2]:
        traced = output(records).filter(lambda r, wanted=wanted: key_of(r) == wanted).goBackAll().collect()
        assert counted(traced) == counted(_as_order(i) for i in sorted(lineage[wanted]))
    one = next(iter(lineage[sorted(lineage)[0]]))
    reached = source(records, "read.parquet").filter(lambda r: r.order_id == one).goNextAll().collect()
    assert sorted(map(key_of, reached)) == sorted(k for k, ids in lineage.items() if one in ids)
    rewritten = captured_query(records, spark.sql(text))._df
    assert "lineage_or" not in str(rewritten._jdf.queryExecution().optimizedPlan())  # no set made per row


@pytest.mark.parametrize("window", ["avg(amount) OVER (PARTITION BY customer_id)",
                                    "cume_dist() OVER (PARTITION BY customer_id ORDER BY amount)"])
def test_a_window_over_its_whole_partition_is_tapped_both_ways(records: Any, spark: Any, window: str) -> None:
    """A window value of the whole partition (an aggregate over it, cume_dist): a row's lineage is
    its partition's rows, which the window's tasks write once as a combiner point (WindowIds), the
    row holding its partition's id in it, not a set of the partition's ids."""
    from capture_agent.record.capture.frame_plan import captured_query

    text = f"SELECT order_id, customer_id, {window} AS w FROM orders"
    df = spark.sql(text)
    got = df.collect()
    assert counted(got) == plain_rows(df)
    for cid in ("c0", "c3"):
        traced = output(records).filter(lambda r, cid=cid: r.customer_id == cid and r.order_id < 30).goBackAll()
        assert counted(traced.collect()) == counted([o for o in ORDERS if o[1] == cid])
    reached = source(records, "read.parquet").filter(lambda r: r.order_id == 3).goNextAll().collect()
    assert sorted(r.order_id for r in reached) == [o[0] for o in ORDERS if o[1] == ORDERS[3][1]]
    assert [slot.is_set for slot in captured_query(records, spark.sql(text))._slots] == [False]


RUNNING = {  # a running frame's window, and each row's lineage: its customer's orders up to it
    "rows": ("sum(amount) OVER (PARTITION BY customer_id ORDER BY order_id ROWS BETWEEN UNBOUNDED PRECEDING "
             "AND CURRENT ROW)", lambda o, r: o[0] <= r.order_id),
    "rank": ("rank() OVER (PARTITION BY customer_id ORDER BY order_id)", lambda o, r: o[0] <= r.order_id),
    # a range frame (ORDER BY's default): the row's peers, of equal amount, too
    "range": ("sum(amount) OVER (PARTITION BY customer_id ORDER BY amount)", lambda o, r: o[2] <= r.amount),
}


@pytest.mark.parametrize("frame", sorted(RUNNING))
def test_a_running_window_is_tapped_by_places_both_ways(records: Any, spark: Any, frame: str) -> None:
    """A window whose values are computed from the rows up to each row (a running sum, a rank): a
    row's lineage is its partition's rows up to it (with a range frame, its peers too), which the
    window's tasks write once, a place a row (a ``frame_prefix`` combiner point), each row holding
    the id of its frame's last place instead of a set of every row before it. Traced both ways."""
    from capture_agent.record.capture.frame_plan import captured_query

    window, before = RUNNING[frame]
    text = f"SELECT order_id, customer_id, amount, {window} AS w FROM orders"
    df = spark.sql(text)
    got = df.collect()
    assert counted(got) == plain_rows(df)
    lineage = {r.order_id: [o for o in ORDERS if o[1] == r.customer_id and before(o, r)] for r in got}
    for order_id in (3, 52, 115):
        traced = output(records).filter(lambda r, order_id=order_id: r.order_id == order_id).goBackAll().collect()
        assert counted(traced) == counted(lineage[order_id]), order_id
    reached = source(records, "read.parquet").filter(lambda r: r.order_id == 52).goNextAll().collect()
    assert sorted(r.order_id for r in reached) == sorted(k for k, rows in lineage.items() if ORDERS[52] in rows)
    points = [p for p in records.store.by_seq() if p.kind == "combiner"]
    assert points[-1].layout.name == "frame_prefix"
    # deletion counts add up over a place's prefix: a row whose rows up to it are all deleted dies
    impact = source(records, "read.parquet").filter(lambda r: r.order_id == 52).whatIfDeleted()
    hit = {k for k, rows in lineage.items() if ORDERS[52] in rows}
    assert sorted(r.order_id for r in impact.dead()) == sorted(k for k in hit if lineage[k] == [ORDERS[52]])
    assert sorted(r.order_id for r in impact.reached()) == sorted(k for k in hit if lineage[k] != [ORDERS[52]])
    assert [slot.is_set for slot in captured_query(records, spark.sql(text))._slots] == [False]


def test_running_windows_over_a_running_window_of_groups_trace_to_their_rows(records: Any, spark: Any) -> None:
    """TPC-DS 51's shape: a cumulative sum over a day's total per customer, a cumulative maximum
    over that: both windows tapped by places, the outer one's rows places of the inner one's,
    whose rows are groups. A row (customer, day) traces back to the customer's orders up to that day."""
    text = ("SELECT customer_id, day, max(s) OVER (PARTITION BY customer_id ORDER BY day) AS m FROM "
            "(SELECT customer_id, day, sum(sum(amount)) OVER (PARTITION BY customer_id ORDER BY day ROWS BETWEEN "
            "UNBOUNDED PRECEDING AND CURRENT ROW) AS s FROM orders GROUP BY customer_id, day)")
    df = spark.sql(text)
    got = df.collect()
    assert counted(got) == plain_rows(df)
    for cid, day in (("c2", "2026-02-14"), ("c5", "2026-03-18"), ("c0", "2026-01-10")):
        traced = output(records).filter(lambda r, cid=cid, day=day: (r.customer_id, r.day) == (cid, day))
        assert counted(traced.goBackAll().collect()) == counted(o for o in ORDERS if o[1] == cid and o[3] <= day)
    one = ORDERS[40]
    reached = source(records, "read.parquet").filter(lambda r: r.order_id == one[0]).goNextAll().collect()
    assert sorted((r.customer_id, r.day) for r in reached) == sorted(
        (r.customer_id, r.day) for r in got if r.customer_id == one[1] and r.day >= one[3])
    layouts = [p.layout.name for p in records.store.by_seq() if p.kind == "combiner"]
    assert layouts[-3:] == ["frame_groups", "frame_prefix", "frame_prefix"]


def test_a_refused_query_registers_its_output_as_not_captured(records: Any, spark: Any) -> None:
    """The action that ran plain is sent to the server as an output point with no table whose
    ``not_captured`` names the action and the operator that stopped it."""
    import capture_agent
    from capture_agent import CollectingSink
    from tests.ingest_schema import assert_valid_events

    orders = spark.table("orders")
    df = orders.groupBy("customer_id").applyInPandas(lambda pdf: pdf.head(1), orders.schema)
    sink = CollectingSink()
    agent = capture_agent.enable(spark, sink=sink)
    try:
        if agent is None or not agent.running:
            pytest.skip("the coarse agent cannot start here")
        assert counted(df.collect()) == plain_rows(df)
        agent.flush(5)
    finally:
        capture_agent.disable()
    sent = [e for e in sink.events if e["type"] == "capture_point" and e.get("not_captured")]
    assert len(sent) == 1 and records.events_sent >= 1
    event = sent[0]
    assert event["not_captured"].startswith("DataFrame.collect ran plain: ")
    assert "FlatMapGroupsInPandas" in event["not_captured"]
    assert (event["kind"], event["rows"], event["bytes"], event["parents"]) == ("output", 0, 0, [])
    assert event["location"].rstrip("/").endswith(records.store.run_id)
    assert event["capture_id"] == f"{records.store.run_id}/{records.store.not_captured[-1]['capture_id']}"
    assert event in [dict(e, time=event["time"]) for e in records.capture_point_events()]  # also for callers
    assert_valid_events([event])


def test_a_what_if_through_a_table_the_job_wrote_and_read_back(records: Any, spark: Any, tmp_path: Path) -> None:
    """Deleting orders before a write the job reads back changes the totals computed from the
    read: the replay reads the written files without the rows the deletion reached there."""
    written = str(tmp_path / "big_orders")
    spark.sql("SELECT * FROM orders WHERE amount > 3").write.parquet(written)
    spark.read.parquet(written).createOrReplaceTempView("big")
    totals = spark.sql("SELECT customer_id, sum(amount) AS total FROM big GROUP BY customer_id")
    before = {r.customer_id: r.total for r in totals.collect()}
    first = [p for p in records.store.by_seq() if p.kind == "input" and p.op == "read.parquet"][0]
    gone = sorted(o for o in ORDERS if o[2] > 3)[0]
    impact = records.lineage(first.capture_id).filter(lambda r: tuple(r) == gone).whatIfDeleted()
    kept = [o for o in ORDERS if o[2] > 3 and o != gone]
    after = {c: sum(o[2] for o in kept if o[1] == c) for c in {o[1] for o in kept}}
    assert sorted((old.customer_id, old.total, new.total) for old, new in impact.changed()) == \
        sorted((c, before[c], after[c]) for c in after if after[c] != before[c])
    assert [r.customer_id for r in impact.deleted()] == [c for c in before if c not in after]
