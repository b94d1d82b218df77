"""SQL over captured DataFrames (``lc.sql``: the plan rewritten in the JVM, ``capture.frame_plan``)
gives spark.sql's results, and traces both ways equal to oracles computed from the tables (which
rows hold the key, the match)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.capture_agent.record.test_dataframes import (  # noqa: F401 - fixtures
    CUSTOMER_SCHEMA,
    CUSTOMERS,
    ITEMS,
    ORDERS,
    back,
    frames,
    plain,
    rows,
    where,
)

pytestmark = pytest.mark.spark


@pytest.fixture
def views(frames: dict[str, Any]) -> dict[str, Any]:  # noqa: F811 - the imported fixture
    for name, frame in frames.items():
        frame.createOrReplaceTempView(name)
    return frames


def same(lc: Any, spark: Any, query: str) -> tuple[Any, list[Any]]:
    """The captured query and its rows, checked equal (in order) to spark.sql's over the same views."""
    captured = lc.sql(query)
    got = captured.collect()
    expected = spark.sql(query).collect()
    assert [tuple(r) for r in got] == [tuple(r) for r in expected]
    assert captured.columns == spark.sql(query).columns
    return captured, got


def test_join_where_group_by_having_order_limit(lc, spark, views):
    totals, got = same(lc, spark, """
        SELECT c.country, sum(o.amount) AS total, count(*) AS n
        FROM orders o JOIN customers c ON o.customer_id = c.customer_id
        WHERE o.amount > 3
        GROUP BY c.country HAVING sum(o.amount) > 100
        ORDER BY total DESC LIMIT 2""")
    assert len(got) == 2
    for row in got:
        ids = {c[0] for c in CUSTOMERS if c[1] == row.country}
        kept = [o for o in ORDERS if o[1] in ids and o[2] > 3]
        matched = [c for c in CUSTOMERS if c[0] in {o[1] for o in kept}]
        assert row.total == sum(o[2] for o in kept)
        assert back(totals, where("country", row.country)) == rows(kept + matched)
    # forward: an order over 3 reaches its country's total when that total is in the top two
    order = next(o for o in ORDERS if o[2] > 3 and next(c[1] for c in CUSTOMERS if c[0] == o[1]) == got[0].country)
    forward = views["orders"].getLineage().filter(where("order_id", order[0])).goNextAll().collect()
    assert [tuple(r) for r in forward] == [tuple(got[0])]


def test_a_python_udf_in_select_and_where(lc, spark, views):
    from pyspark.sql.types import StringType

    spark.udf.register("band", lambda amount: "high" if amount >= 8 else "low", StringType())
    banded, got = same(lc, spark, """
        SELECT order_id, band(amount) AS band FROM orders
        WHERE band(amount) = 'high' AND order_id < 40 ORDER BY order_id""")
    assert [r.order_id for r in got] == [o[0] for o in ORDERS if o[2] >= 8 and o[0] < 40]
    assert back(banded, where("order_id", got[0].order_id)) == rows([ORDERS[got[0].order_id]])


def test_tpch_q3_like_in_sql(lc, spark, views):
    q3, got = same(lc, spark, """
        SELECT o.order_id, o.day, sum(i.price * (1 - i.discount / 10)) AS revenue
        FROM customers c
        JOIN orders o ON c.customer_id = o.customer_id
        JOIN items i ON i.order_id = o.order_id
        WHERE c.segment = 'seg1' AND o.day < '2026-03' AND i.discount > 0
        GROUP BY o.order_id, o.day
        ORDER BY revenue DESC, o.order_id LIMIT 5""")
    top = got[0]
    order = ORDERS[top.order_id]
    customer = next(c for c in CUSTOMERS if c[0] == order[1])
    items = [i for i in ITEMS if i[1] == top.order_id and i[3] > 0]
    assert back(q3, where("order_id", top.order_id)) == rows([order, customer, *items])
    outside = next(i for i in ITEMS if i[1] not in {r.order_id for r in got})
    assert views["items"].getLineage().filter(where("item_id", outside[0])).goNextAll().collect() == []


def test_window_function_in_sql(lc, spark, views):
    best, got = same(lc, spark, """
        SELECT order_id, customer_id, customer_total FROM (
            SELECT order_id, customer_id,
                   row_number() OVER (PARTITION BY customer_id ORDER BY amount DESC, order_id) AS rank,
                   sum(amount) OVER (PARTITION BY customer_id) AS customer_total
            FROM orders) ranked
        WHERE rank = 1 ORDER BY customer_id""")
    assert len(got) == len({o[1] for o in ORDERS})
    assert back(best, where("customer_id", "c5")) == rows([o for o in ORDERS if o[1] == "c5"])


def test_self_join_union_distinct_and_outer_semi_anti(lc, spark, views):
    pairs, got = same(lc, spark, """
        SELECT a.order_id AS first, b.order_id AS second FROM orders a JOIN orders b
        ON a.customer_id = b.customer_id AND a.order_id + 7 = b.order_id
        WHERE a.order_id < 10 ORDER BY first""")
    assert back(pairs, where("first", 3)) == rows([ORDERS[3], ORDERS[10]])
    days, _ = same(lc, spark, """
        SELECT DISTINCT day FROM (SELECT day FROM orders WHERE amount > 10
                                  UNION ALL SELECT day FROM orders WHERE order_id < 3) both_ ORDER BY day""")
    expected = [o for o in ORDERS if (o[2] > 10 or o[0] < 3) and o[3] == "2026-01-10"]
    assert back(days, where("day", "2026-01-10")) == rows(expected)
    few = lc.createDataFrame([c for c in CUSTOMERS if c[0] in ("c1", "c2")], CUSTOMER_SCHEMA)
    few.createOrReplaceTempView("few")
    left, _ = same(lc, spark, "SELECT o.order_id, f.country FROM orders o LEFT JOIN few f "
                              "ON o.customer_id = f.customer_id ORDER BY o.order_id")
    assert back(left, where("order_id", 3)) == rows([ORDERS[3]])
    assert back(left, where("order_id", 1)) == rows([ORDERS[1], CUSTOMERS[1]])
    semi, _ = same(lc, spark, "SELECT * FROM orders o LEFT SEMI JOIN few f ON o.customer_id = f.customer_id "
                              "ORDER BY order_id")
    assert back(semi, where("order_id", 2)) == rows([ORDERS[2], CUSTOMERS[2]])
    anti, _ = same(lc, spark, "SELECT order_id FROM orders o LEFT ANTI JOIN few f USING (customer_id) "
                              "ORDER BY order_id")
    assert back(anti, where("order_id", 3)) == rows([ORDERS[3]])


def test_global_and_distinct_aggregates_and_star(lc, spark, views):
    overall, [row] = same(lc, spark, "SELECT count(*) AS n, count(DISTINCT customer_id) AS customers, "
                                     "max(amount) AS top FROM orders WHERE day >= '2026-02'")
    assert row.n == sum(1 for o in ORDERS if o[3] >= "2026-02")
    assert back(overall, lambda r: True) == rows([o for o in ORDERS if o[3] >= "2026-02"])
    starred, got = same(lc, spark, "SELECT * FROM customers WHERE country = 'FR' ORDER BY customer_id")
    assert back(starred, where("customer_id", got[0].customer_id)) == rows([CUSTOMERS[int(got[0].customer_id[1:])]])


def test_a_what_if_replays_the_sql_over_a_cached_view(lc, spark, views):
    views["orders"].cache().createOrReplaceTempView("orders")  # the replay must not read the cache
    totals, got = same(lc, spark, "SELECT c.country, sum(o.amount) AS total FROM orders o JOIN customers c "
                                  "ON o.customer_id = c.customer_id GROUP BY c.country")
    impact = views["customers"].getLineage().filter(where("customer_id", "c1")).whatIfDeleted(totals)
    lost = sum(o[2] for o in ORDERS if o[1] == "c1")
    assert [(old.country, old.total - lost) for old, new in impact.changed()] == \
        [(new.country, new.total) for _, new in impact.changed()] == \
        [("FR", next(r.total for r in got if r.country == "FR") - lost)]
    assert sorted(r.country for r in impact.unchanged()) == ["JP", "US"] and impact.deleted() == []


def test_sql_the_old_rebuild_refused_is_captured(lc, spark, views):
    """Subqueries, CUBE and a view the context did not read: the plan is rewritten in the JVM."""
    above, got = same(lc, spark, "SELECT order_id FROM orders WHERE amount > (SELECT avg(amount) FROM orders) "
                                 "ORDER BY order_id")
    mean = sum(o[2] for o in ORDERS) / len(ORDERS)
    assert [r.order_id for r in got] == [o[0] for o in ORDERS if o[2] > mean]
    # every order the average read, the row itself among them
    assert back(above, where("order_id", got[0].order_id)) == rows(ORDERS)
    cube, got = same(lc, spark, "SELECT customer_id, day, count(*) AS n FROM orders "
                                "GROUP BY CUBE(customer_id, day) ORDER BY customer_id NULLS FIRST, day NULLS FIRST, n")
    total = next(r for r in got if r.customer_id is None and r.day is None)
    assert total.n == len(ORDERS) and back(cube, lambda r: r.customer_id is None and r.day is None) == rows(ORDERS)
    one = next(r for r in got if r.customer_id == "c3" and r.day is None)
    assert back(cube, lambda r: r.customer_id == "c3" and r.day is None) == rows([o for o in ORDERS if o[1] == "c3"])
    assert one.n == sum(1 for o in ORDERS if o[1] == "c3")
    spark.createDataFrame([("c1", 5), ("c2", 9)], "customer_id string, bonus int").createOrReplaceTempView("bonuses")
    joined, got = same(lc, spark, "SELECT b.customer_id, b.bonus, c.country FROM bonuses b "
                                  "JOIN customers c USING (customer_id) ORDER BY customer_id")
    assert back(joined, where("customer_id", "c2")) == rows([("c2", 9), CUSTOMERS[2]])


def test_refused_sql_names_what(lc, spark, views):
    from capture_agent.record import UnsupportedOperation

    spark.range(3).mapInPandas(lambda batches: batches, "id long").createOrReplaceTempView("mapped")
    query = lc.sql("SELECT * FROM mapped")  # refused at its action, named
    with pytest.raises(UnsupportedOperation, match="MapInPandas"):
        query.collect()
