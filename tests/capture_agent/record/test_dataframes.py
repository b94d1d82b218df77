"""Captured DataFrames (``capture.captured_frames``): PySpark's results, and traces both ways equal to
oracles computed from the data itself (which input rows hold the key, the value, the match)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ORDERS = [(i, f"c{i % 7}", float(i % 13), f"2026-0{1 + i % 3}-1{i % 9}") for i in range(120)]
ORDER_SCHEMA = "order_id long, customer_id string, amount double, day string"
CUSTOMERS = [(f"c{i}", ["JP", "FR", "US"][i % 3], f"seg{i % 2}") for i in range(7)]
CUSTOMER_SCHEMA = "customer_id string, country string, segment string"
ITEMS = [(i, i % 120, float(i % 5) + 1.0, i % 4) for i in range(300)]
ITEM_SCHEMA = "item_id long, order_id long, price double, discount long"


@pytest.fixture
def frames(lc: Any, tables: dict[str, str]) -> dict[str, Any]:
    return {"orders": lc.read.parquet(tables["orders"]), "items": lc.read.parquet(tables["items"]),
            "customers": lc.createDataFrame(CUSTOMERS, CUSTOMER_SCHEMA)}


@pytest.fixture
def plain(spark: Any, tables: dict[str, str]) -> dict[str, Any]:
    return {"orders": spark.read.parquet(tables["orders"]), "items": spark.read.parquet(tables["items"]),
            "customers": spark.createDataFrame(CUSTOMERS, CUSTOMER_SCHEMA)}


def rows(values: list[Any]) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(v) for v in values)


def back(frame: Any, predicate: Callable[[Any], bool]) -> Counter[tuple[Any, ...]]:
    """The source rows (of every source) behind the frame's output rows meeting ``predicate``."""
    return rows(frame.getLineage().filter(predicate).goBackAll().collect())


def where(field: str, value: Any) -> Callable[[Any], bool]:
    return lambda r: bool(r[field] == value)


class Numbered:
    """A source of many rows whose first field is unique (``n``), read once: each row's id, so that a
    test of large groups traces ids both ways instead of reading the rows of every trace again
    (a backward trace's ids, a forward trace from one row's id)."""

    def __init__(self, lc: Any, source: Any) -> None:
        self.lc, self.point = lc, source._point
        self.id_of = {row[0]: i for i, row in source.getLineage().items()}

    def ids(self, values: Any) -> set[int]:
        return {self.id_of[v] for v in values}

    def forward(self, value: Any) -> list[tuple[Any, ...]]:
        """The output rows the source row of ``n == value`` reaches."""
        from capture_agent.record.query.lineage_rdd import LineageRDD

        start = LineageRDD.at_point(self.lc.lineage_session, self.point, [self.id_of[value]])
        return [tuple(r) for r in start.goNextAll().collect()]


def back_ids(frame: Any, predicate: Callable[[Any], bool]) -> set[int]:
    """The ids of the source records behind the frame's output rows meeting ``predicate``."""
    return set(frame.getLineage().filter(predicate).goBackAll().ids())


def same_results(captured: Any, plain: Any) -> list[Any]:
    got = captured.collect()
    assert rows(got) == rows(plain.collect())
    assert captured.columns == plain.columns
    return got


@pytest.fixture(params=["generated", "interpreted"])
def codegen(request: pytest.FixtureRequest, spark: Any) -> Any:
    """Spark's generated code (its default), or its interpreted expressions (a stage too wide to
    generate runs so): an aggregate's tap is called either way."""
    settings = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
    before = {key: spark.conf.get(key, None) for key in settings}
    if request.param == "interpreted":
        for key, value in settings.items():
            spark.conf.set(key, value)
    yield request.param
    for key, value in before.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def test_join_filter_aggregate_both_ways(frames: dict[str, Any], plain: dict[str, Any], codegen: str) -> None:
    from pyspark.sql import functions as F

    def job(t: dict[str, Any]) -> Any:
        return (t["orders"].join(t["customers"], "customer_id").where(F.col("amount") > 10)
                .groupBy("country").agg(F.sum("amount").alias("total")))

    per_country = job(frames)
    got = same_results(per_country, job(plain))
    for row in got:
        ids = {c[0] for c in CUSTOMERS if c[1] == row.country}
        expected = [o for o in ORDERS if o[1] in ids and o[2] > 10]
        behind = [c for c in CUSTOMERS if c[0] in {o[1] for o in expected}]
        assert back(per_country, where("country", row.country)) == rows(expected + behind)
        trace = per_country.getLineage().filter(where("country", row.country)).goBackAll()
        assert trace.take(len(expected) + 1) == trace.collect()[:len(expected) + 1]  # both sources
    # forward: the French customers reach exactly the French total
    forward = frames["customers"].getLineage().filter(lambda r: r.country == "FR").goNextAll().collect()
    assert [tuple(r) for r in forward] == [tuple(r) for r in got if r.country == "FR"]
    # forward from one order: the total of its customer's country, if it passed the filter
    order = frames["orders"].getLineage().filter(lambda r: r.order_id == 11).goNextAll().collect()
    country = next(c[1] for c in CUSTOMERS if c[0] == ORDERS[11][1])
    assert [r.country for r in order] == [country]
    assert frames["orders"].getLineage().filter(lambda r: r.order_id == 10).goNextAll().collect() == []


def test_python_udf_and_projection_are_one_to_one(frames: dict[str, Any], plain: dict[str, Any]) -> None:
    from pyspark.sql import functions as F

    bucket = F.udf(lambda amount: "big" if amount > 6 else "small", "string")

    def job(t: dict[str, Any]) -> Any:
        return (t["orders"].withColumn("size", bucket("amount")).select("order_id", "size", (F.col("amount") * 2)
                .alias("twice")).filter(F.col("order_id") % 5 == 0))

    captured = job(frames)
    same_results(captured, job(plain))
    for order_id in (0, 35, 115):
        assert back(captured, where("order_id", order_id)) == rows([ORDERS[order_id]])
    forward = frames["orders"].getLineage().filter(lambda r: r.order_id in (35, 36)).goNextAll().collect()
    assert [r.order_id for r in forward] == [35]


def test_distinct_and_drop_duplicates(frames: dict[str, Any], plain: dict[str, Any]) -> None:
    days = frames["orders"].select("day").distinct()
    same_results(days, plain["orders"].select("day").distinct())
    assert back(days, lambda r: r.day == "2026-01-10") == rows([o for o in ORDERS if o[3] == "2026-01-10"])
    firsts = frames["orders"].dropDuplicates(["customer_id"])
    got = firsts.collect()
    assert sorted(r.customer_id for r in got) == sorted({o[1] for o in ORDERS})
    assert firsts.columns == plain["orders"].columns
    assert back(firsts, lambda r: r.customer_id == "c2") == rows([o for o in ORDERS if o[1] == "c2"])


def test_outer_semi_and_anti_joins(lc: Any, frames: dict[str, Any], plain: dict[str, Any]) -> None:
    from pyspark.sql import functions as F

    few = [c for c in CUSTOMERS if c[0] in ("c1", "c2")]
    captured_few = lc.createDataFrame(few, CUSTOMER_SCHEMA)
    plain_few = plain["customers"].where("customer_id in ('c1', 'c2')")
    left = frames["orders"].join(captured_few, "customer_id", "left")
    same_results(left, plain["orders"].join(plain_few, "customer_id", "left"))
    # an order without a customer came from itself alone; one with a customer from both
    assert back(left, lambda r: r.order_id == 3) == rows([ORDERS[3]])
    assert back(left, lambda r: r.order_id == 1) == rows([ORDERS[1], few[0]])
    semi = frames["orders"].join(captured_few, "customer_id", "left_semi")
    same_results(semi, plain["orders"].join(plain_few, "customer_id", "left_semi"))
    assert back(semi, lambda r: r.order_id == 2) == rows([ORDERS[2], few[1]])
    anti = frames["orders"].join(captured_few, "customer_id", "anti")
    same_results(anti, plain["orders"].join(plain_few, "customer_id", "anti"))
    assert back(anti, lambda r: r.order_id == 3) == rows([ORDERS[3]])
    # against an aggregated right side too (its aggregate is not the join's)
    busy = frames["orders"].join(captured_few.groupBy("customer_id").count(), "customer_id", "anti")
    same_results(busy, plain["orders"].join(plain_few.groupBy("customer_id").count(), "customer_id", "anti"))
    # toPandas of a left join: an order without a customer has no customer ids (pandas NaN, not an id)
    first_four = left.where(F.col("order_id") < 4)
    assert sorted(first_four.toPandas().order_id) == [0, 1, 2, 3]
    assert back(first_four, lambda r: r.order_id == 3) == rows([ORDERS[3]])
    assert back(first_four, lambda r: r.order_id == 1) == rows([ORDERS[1], few[0]])


def test_union_self_join_and_explode(lc: Any, frames: dict[str, Any], plain: dict[str, Any]) -> None:
    from pyspark.sql import functions as F

    orders, customers = frames["orders"], frames["customers"]
    both = orders.select("customer_id").union(customers.select("customer_id")).groupBy("customer_id").count()
    same_results(both, plain["orders"].select("customer_id").union(plain["customers"].select("customer_id"))
                 .groupBy("customer_id").count())
    assert back(both, lambda r: r.customer_id == "c4") == rows(
        [o for o in ORDERS if o[1] == "c4"] + [c for c in CUSTOMERS if c[0] == "c4"])
    by_name = customers.select("country", "customer_id").unionByName(orders.select("customer_id"),
                                                                     allowMissingColumns=True)
    assert len(by_name.collect()) == len(CUSTOMERS) + len(ORDERS)
    assert back(by_name, lambda r: r.country == "JP") == rows([c for c in CUSTOMERS if c[1] == "JP"])
    # a source on both sides of a join: a pair of orders of one customer came from both orders
    pairs = orders.alias("a").join(orders.alias("b"), F.col("a.customer_id") == F.col("b.customer_id")) \
        .where(F.col("a.order_id") + 7 == F.col("b.order_id")).select(F.col("a.order_id").alias("first"))
    assert 14 in [r.first for r in pairs.collect()]
    assert back(pairs, lambda r: r.first == 14) == rows([ORDERS[14], ORDERS[21]])
    words = lc.createDataFrame([("a b",), ("b c",), ("c",)], "line string")
    exploded = words.select(F.explode(F.split("line", " ")).alias("word")).groupBy("word").count()
    assert rows(exploded.collect()) == rows([("a", 1), ("b", 2), ("c", 2)])
    assert back(exploded, lambda r: r.word == "c") == rows([("b c",), ("c",)])


def test_tpch_q3_like_three_table_join(frames: dict[str, Any], plain: dict[str, Any]) -> None:
    from pyspark.sql import functions as F

    def q3(t: dict[str, Any]) -> Any:
        return (t["customers"].where(F.col("segment") == "seg1")
                .join(t["orders"].where(F.col("day") < "2026-03"), "customer_id")
                .join(t["items"].where(F.col("discount") > 0), "order_id")
                .groupBy("order_id", "day")
                .agg(F.sum(F.col("price") * (1 - F.col("discount") / 10)).alias("revenue"))
                .orderBy(F.desc("revenue"), "order_id").limit(5))

    captured = q3(frames)
    got = captured.collect()
    assert [tuple(r) for r in got] == [tuple(r) for r in q3(plain).collect()]
    top = got[0]
    order = ORDERS[top.order_id]
    customer = next(c for c in CUSTOMERS if c[0] == order[1])
    items = [i for i in ITEMS if i[1] == top.order_id and i[3] > 0]
    assert back(captured, lambda r: r.order_id == top.order_id) == rows([order, customer, *items])
    # forward from an item of an order that is not in the top five reaches nothing
    outside = next(i for i in ITEMS if i[1] not in {r.order_id for r in got})
    assert frames["items"].getLineage().filter(lambda r: r.item_id == outside[0]).goNextAll().collect() == []


def test_window_functions_trace_to_their_partition(frames: dict[str, Any], plain: dict[str, Any]) -> None:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def job(t: dict[str, Any]) -> Any:
        by_customer = Window.partitionBy("customer_id").orderBy(F.desc("amount"), "order_id")
        return (t["orders"].withColumn("rank", F.row_number().over(by_customer))
                .select("order_id", "customer_id", "rank",
                        F.sum("amount").over(Window.partitionBy("customer_id")).alias("customer_total"))
                .where(F.col("rank") == 1))

    best = job(frames)
    got = same_results(best, job(plain))
    assert len(got) == len({o[1] for o in ORDERS})
    # a customer's best order was chosen among, and its total summed over, all that customer's orders
    assert back(best, where("customer_id", "c5")) == rows([o for o in ORDERS if o[1] == "c5"])
    forward = frames["orders"].getLineage().filter(where("order_id", 12)).goNextAll().collect()
    assert [r.customer_id for r in forward] == [ORDERS[12][1]]


def test_window_frames_are_exact(frames: dict[str, Any], plain: dict[str, Any]) -> None:
    """A row traces to itself and its frame: lag's row, a 3-row moving sum, the rows ranked before."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_order = Window.partitionBy("customer_id").orderBy("order_id")

    def moving(t: dict[str, Any]) -> Any:
        return (t["orders"].select("order_id", "customer_id", F.lag("amount").over(by_order).alias("before"),
                                   F.sum("amount").over(by_order.rowsBetween(-2, 0)).alias("last3"))
                .where(F.col("customer_id") == "c2"))

    captured = moving(frames)
    same_results(captured, moving(plain))
    c2 = sorted(o for o in ORDERS if o[1] == "c2")
    for k in (0, 1, 5):
        assert back(captured, where("order_id", c2[k][0])) == rows(c2[max(0, k - 2):k + 1])

    def ranked(t: dict[str, Any]) -> Any:
        by_amount = Window.partitionBy("customer_id").orderBy(F.desc("amount"), "order_id")
        return t["orders"].select("order_id", "customer_id", F.rank().over(by_amount).alias("rank"))

    captured = ranked(frames)
    same_results(captured, ranked(plain))
    c3 = sorted((o for o in ORDERS if o[1] == "c3"), key=lambda o: (-o[2], o[0]))
    third = c3[2]
    assert back(captured, where("order_id", third[0])) == rows(c3[:3])  # the rows ranked before, and itself


def test_rdd_of_a_frame_continues_the_lineage(frames: dict[str, Any]) -> None:
    from operator import add

    from pyspark.sql import functions as F

    orders = frames["orders"]
    per_customer = orders.where(F.col("amount") > 3).rdd.map(lambda r: (r.customer_id, r.amount)).reduceByKey(add)
    got = dict(per_customer.collect())
    assert got == {c: sum(o[2] for o in ORDERS if o[1] == c and o[2] > 3) for c in {o[1] for o in ORDERS}}
    behind = per_customer.getLineage().filter(lambda kv: kv[0] == "c6").goBackAll().collect()
    assert rows(behind) == rows([o for o in ORDERS if o[1] == "c6" and o[2] > 3])
    forward = orders.getLineage().filter(where("order_id", 20)).goNextAll().collect()  # c6, 7.0
    assert forward == [("c6", got["c6"])]
    # an aggregated frame's rows: each traces to its group's rows
    days = orders.groupBy("day").count().rdd.map(lambda r: (r.day, r["count"]))
    assert sorted(days.collect()) == sorted(Counter(o[3] for o in ORDERS).items())
    assert rows(days.getLineage().filter(lambda kv: kv[0] == "2026-02-14").goBackAll().collect()) == rows(
        [o for o in ORDERS if o[3] == "2026-02-14"])


def test_text_csv_json_readers_and_to_df(lc: Any, write_text: Callable[..., str]) -> None:
    from operator import add

    from pyspark.sql import functions as F

    lines = ["error disk full", "ok", "error timeout", "warning disk slow", "error disk again"]
    path = write_text("log.txt", lines)
    words = lc.read.text(path).select(F.explode(F.split("value", " ")).alias("word")).groupBy("word").count()
    assert rows(words.collect()) == rows(list(Counter(w for line in lines for w in line.split()).items()))
    behind = words.getLineage().filter(where("word", "disk")).goBackAll()
    assert sorted(behind.collect()) == sorted(line for line in lines if "disk" in line.split())
    starts = [sum(len(line) + 1 for line in lines[:i]) for i in range(len(lines))]
    assert sorted(p.offset for p in behind.positions()) == [starts[i] for i, line in enumerate(lines)
                                                            if "disk" in line.split()]

    csv = write_text("people.csv", ["name,age,city", "ann,31,Oslo", "bob,45,Rome", "cid,28,Oslo"])
    people = lc.read.csv(csv, header=True, inferSchema=True)
    assert people.dtypes == [("name", "string"), ("age", "int"), ("city", "string")]
    oslo = people.where(F.col("city") == "Oslo").agg(F.avg("age").alias("age"))
    assert oslo.collect()[0].age == 29.5
    assert sorted(oslo.getLineage().goBackAll().collect()) == [("ann", 31, "Oslo"), ("cid", 28, "Oslo")]

    js = write_text("events.json", ['{"user": 1, "kind": "a"}', '{"user": 2, "kind": "b"}', '{"user": 1, "kind": "c"}'])
    events = lc.read.json(js).groupBy("user").agg(F.count("*").alias("n"))
    assert rows(events.collect()) == rows([(1, 2), (2, 1)])
    assert [p.offset for p in events.getLineage().filter(where("user", 2)).goBackAll().positions()] == [
        len('{"user": 1, "kind": "a"}') + 1]

    # a captured RDD's records as a DataFrame, and back: one trace across both
    counts = lc.textFile(path).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    frame = counts.toDF(["word", "n"]).where(F.col("n") > 1)
    assert rows(frame.collect()) == rows([("error", 3), ("disk", 3)])
    assert sorted(frame.getLineage().filter(where("word", "error")).goBackAll().collect()) == sorted(
        line for line in lines if "error" in line.split())
    same = lc.createDataFrame(counts, "word string, n long")
    assert same.count() == len({w for line in lines for w in line.split()})


def test_actions_count_to_pandas_write(lc: Any, frames: dict[str, Any], spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    big = frames["orders"].where(F.col("amount") > 11)
    assert big.count() == sum(1 for o in ORDERS if o[2] > 11)
    assert back(big, lambda r: True) == rows([o for o in ORDERS if o[2] > 11])  # the count's lineage
    pdf = frames["customers"].where("country = 'US'").toPandas()
    assert list(pdf.columns) == ["customer_id", "country", "segment"]
    assert sorted(pdf.customer_id) == sorted(c[0] for c in CUSTOMERS if c[1] == "US")
    out = str(tmp_path / "out")
    totals = frames["orders"].groupBy("customer_id").agg(F.count("*").alias("n"))
    totals.write.mode("overwrite").parquet(out)
    assert rows(spark.read.parquet(out).collect()) == rows(
        [(c, sum(1 for o in ORDERS if o[1] == c)) for c in {o[1] for o in ORDERS}])
    assert totals.getLineage().goBackAll().count() == len(ORDERS)
    first = frames["orders"].orderBy("order_id").first()
    assert tuple(first) == ORDERS[0]


def test_what_if_fates_from_lineage(frames: dict[str, Any]) -> None:
    from pyspark.sql import functions as F

    per_customer = frames["orders"].groupBy("customer_id").agg(F.sum("amount").alias("total"))
    per_customer.collect()
    doomed = frames["orders"].getLineage().filter(lambda r: r.customer_id == "c3" or r.order_id == 0)
    impact = doomed.whatIfDeleted()
    assert [r.customer_id for r in impact.dead()] == ["c3"]
    assert [r.customer_id for r in impact.reached()] == ["c0"]


def test_what_if_replays_the_query_without_the_deleted_rows(frames: dict[str, Any]) -> None:
    from pyspark.sql import functions as F

    from capture_agent.record.query.replay_strategies import FrameQuery

    per_customer = frames["orders"].where(F.col("amount") > 2).groupBy("customer_id") \
        .agg(F.sum("amount").alias("total"), F.count("*").alias("n"))
    per_customer.collect()

    def totals(orders: list[tuple[Any, ...]]) -> dict[str, tuple[float, int]]:
        out: dict[str, tuple[float, int]] = {}
        for o in orders:
            if o[2] > 2:
                total, n = out.get(o[1], (0.0, 0))
                out[o[1]] = (total + o[2], n + 1)
        return out

    gone = {o for o in ORDERS if o[1] == "c3" or o[0] in (4, 5, 7)}  # order 7 (7.0) of c0
    before, after = totals(ORDERS), totals([o for o in ORDERS if o not in gone])
    impact = frames["orders"].getLineage().filter(lambda r: tuple(r) in gone).whatIfDeleted(per_customer)
    assert [r.customer_id for r in impact.deleted()] == ["c3"]
    assert sorted((old.customer_id, (old.total, old.n), (new.total, new.n)) for old, new in impact.changed()) == \
        sorted((c, before[c], after[c]) for c in after if after[c] != before[c])
    assert sorted(r.customer_id for r in impact.unchanged()) == sorted(c for c in after if after[c] == before[c])
    assert impact.appeared() == [] and impact.replay()["how"] == FrameQuery.name
    # the replay's aggregate wrote no tables over the capture's: the lineage is still the whole one
    assert back(per_customer, where("customer_id", "c3")) == rows([o for o in ORDERS if o[1] == "c3" and o[2] > 2])
    # a count: its one row changes; and the next collect runs without any deletion again
    big = frames["orders"].where(F.col("amount") > 10)
    n = big.count()
    counted = frames["orders"].getLineage().filter(lambda r: r.order_id < 40).whatIfDeleted(big)
    assert [(old[0], new[0]) for old, new in counted.changed()] == \
        [(n, sum(1 for o in ORDERS if o[2] > 10 and o[0] >= 40))]
    assert big.count() == n


def test_aggregates_are_capture_points_of_their_own(lc: Any, frames: dict[str, Any],
                                                     plain: dict[str, Any]) -> None:
    """An aggregate of two sources, then an aggregate of its rows: each aggregate's map side is a
    ``combiner`` point whose tables its tasks wrote, and traces cross both, both ways."""
    from pyspark.sql import functions as F

    def job(t: dict[str, Any]) -> Any:
        per_customer = t["orders"].join(t["customers"], "customer_id").groupBy("customer_id", "country") \
            .agg(F.sum("amount").alias("total"))
        return per_customer.groupBy("country").agg(F.count("*").alias("customers"), F.max("total").alias("top"))

    per_country = job(frames)
    same_results(per_country, job(plain))
    store = lc.store
    output = store.point(per_country._point)
    (outer,) = [store.point(p) for p in output.parents]
    (inner,) = [store.point(p) for p in outer.parents]
    assert (outer.kind, outer.layout.name, inner.kind) == ("combiner", "frame_groups", "combiner")
    assert sorted(store.point(p).kind for p in inner.parents) == ["input", "input"]
    assert inner.rows > 0 and inner.bytes > 0 and outer.rows > 0
    japanese = {c[0] for c in CUSTOMERS if c[1] == "JP"}
    assert back(per_country, where("country", "JP")) == \
        rows([o for o in ORDERS if o[1] in japanese] + [c for c in CUSTOMERS if c[0] in japanese])
    reached = frames["orders"].getLineage().filter(where("order_id", 10)).goNextAll().collect()
    assert [r.country for r in reached] == [next(c[1] for c in CUSTOMERS if c[0] == ORDERS[10][1])]


def test_two_reads_of_one_table_are_two_sources_however_equal(spark: Any, tables: dict[str, str],
                                                              tmp_path: Path) -> None:
    """Two contexts reading the same files make equal tables (Spark reuses an exchange over equal
    scans) that are still two sources: each read is known by its own name (``LeafIdentity``), which
    does not change when the other read is gone. Named by equality, the second read took the first's
    name and lost it when the first was collected: its next query was refused as a read of a data
    source the agent did not read (seen when tests began to share these tables)."""
    from capture_agent.record import LineageContext
    from capture_agent.record.capture.frame_jvm import leaf_identities

    first, second = (LineageContext(spark, store=str(tmp_path / name)) for name in ("first", "second"))
    reads = [lc.read.parquet(tables["orders"]) for lc in (first, second)]
    names = [leaf_identities(lc, read._df) for lc, read in zip((first, second), reads, strict=True)]
    assert all(len(n) == 1 for n in names) and names[0] != names[1]
    assert leaf_identities(second, reads[1]._df) == names[1]  # the same object, the same name
    for read in reversed(reads):
        total = read.groupBy("customer_id").count().where("customer_id = 'c3'")
        assert [r["count"] for r in total.collect()] == [sum(1 for o in ORDERS if o[1] == "c3")]
        assert back(total, lambda r: True) == rows([o for o in ORDERS if o[1] == "c3"])


def test_any_query_is_captured_at_its_action_and_refusals_are_named_there(lc: Any, frames: dict[str, Any],
                                                                          spark: Any, tables: dict[str, str]) -> None:
    """A captured frame is PySpark's own: what the wrapper of each method used to refuse (a window
    over an expression, a frame not read through the context, a pivot) is captured at the action by
    the plan rewrite, each traced as the data says; what the rewrite refuses raises at the action,
    named, and nothing before."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from capture_agent.record import UnsupportedOperation

    orders = frames["orders"]
    ranked = orders.withColumn("rank", F.rank().over(Window.partitionBy(F.col("order_id") % 2).orderBy("amount")))
    assert rows(ranked.collect()) == rows(spark.read.parquet(tables["orders"]).withColumn(
        "rank", F.rank().over(Window.partitionBy(F.col("order_id") % 2).orderBy("amount"))).collect())
    # rank: the rows of its partition ordered up to it (of its ties, those Spark sorted before it)
    one = next(o for o in ORDERS if o[0] == 1)
    traced = back(ranked, where("order_id", 1))
    assert rows([o for o in ORDERS if o[0] % 2 == 1 and o[2] < one[2]] + [one]) <= traced
    assert traced <= rows([o for o in ORDERS if o[0] % 2 == 1 and o[2] <= one[2]])

    ids = spark.range(3)  # a frame the context did not read: a source of its own
    joined = orders.withColumnRenamed("order_id", "id").join(ids, "id")
    assert sorted(r.id for r in joined.collect()) == [0, 1, 2]
    assert back(joined, where("id", 2)) == rows([(2, *ORDERS[2][1:]), (2,)])

    pivoted = orders.groupBy("day").pivot("customer_id").count()
    got = {r.day: r for r in pivoted.collect()}
    day = ORDERS[0][3]
    assert got[day]["c0"] == sum(1 for o in ORDERS if o[3] == day and o[1] == "c0")
    assert back(pivoted, where("day", day)) == rows([o for o in ORDERS if o[3] == day])

    mapped = orders.mapInPandas(lambda it: it, orders.schema)  # nothing is refused before the action
    with pytest.raises(UnsupportedOperation, match="MapInPandas"):
        mapped.collect()
    with pytest.raises(UnsupportedOperation, match="read.avro"):
        lc.read.avro("x.avro")
    assert orders.columns == ["order_id", "customer_id", "amount", "day"]


def test_a_capture_that_fails_while_it_runs_runs_the_action_plain_and_says_why(lc: Any, frames: dict[str, Any],
                                                                             plain: dict[str, Any]) -> None:
    """The explicit API never fails the job for a capture that breaks (here its store's folder
    replaced by a file, so nothing can be written there): the action gives PySpark's answer, is
    recorded as not captured, and the frame's lineage says why; the next action that can be
    captured is."""
    import shutil

    from pyspark.sql import functions as F

    from capture_agent.record import NotCaptured

    def per_customer(df: Any) -> Any:
        return df.groupBy("customer_id").agg(F.sum("amount").alias("total"))

    totals = per_customer(frames["orders"])
    run_dir = Path(lc.run_dir)
    kept = run_dir.with_name(run_dir.name + ".kept")
    run_dir.rename(kept)
    run_dir.write_text("not a folder")
    try:
        assert rows(totals.collect()) == rows(per_customer(plain["orders"]).collect())
        assert totals.count() == len({o[1] for o in ORDERS})
        with pytest.raises(NotCaptured, match="ran without record lineage: the capture failed"):
            totals.getLineage()
    finally:
        run_dir.unlink()
        shutil.move(str(kept), str(run_dir))
    assert [e["action"] for e in lc.store.not_captured] == ["collect", "count"]
    assert rows(totals.collect()) == rows(per_customer(plain["orders"]).collect())
    assert back(totals, where("customer_id", "c0")) == rows([o for o in ORDERS if o[1] == "c0"])


def test_created_rows_keep_the_slices_and_order_of_spark_create_data_frame(lc: Any, spark: Any) -> None:
    """``createDataFrame``'s rows, kept in Parquet files and read back, are in the partitions and
    order of ``spark.createDataFrame``'s slices: Spark's read of the files would read the larger
    file first (the second slice here), and a slice of no rows writes no file."""
    import random

    from pyspark.sql import functions as F

    letters = random.Random(13)
    data = [(n, "a") for n in range(20)] + [(n, "".join(letters.choices("abcdefgh", k=3000))) for n in range(20, 40)]
    for rows_ in (data, data[:1]):  # two slices, the second larger; one row: the first slice empty
        captured = lc.createDataFrame(rows_, "n long, s string")
        plain = spark.createDataFrame(rows_, "n long, s string")
        assert [tuple(r) for r in captured.collect()] == rows_
        where_ = [tuple(r) for r in captured.select("n", F.spark_partition_id().alias("p")).collect()]
        assert where_ == [tuple(r) for r in plain.select("n", F.spark_partition_id().alias("p")).collect()]
        assert [p for _, p in where_] == ([0] * 20 + [1] * 20 if len(rows_) > 1 else [1])
        assert back(captured, lambda r: r.n == 21) == rows([r for r in rows_ if r[0] == 21])


def test_parquet_files_of_the_same_size_and_of_many_sizes(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A row's file is found by its size when sizes differ (a tree of comparisons), by its path
    when two files have the same size: ids, traces and positions exact both ways."""
    from pyspark.sql import functions as F

    twins, many = str(tmp_path / "twins"), str(tmp_path / "many")
    rows_ = [(i, f"k{i % 3}") for i in range(40)]
    for _ in range(2):  # the same rows twice: two part files of the same size
        spark.createDataFrame(rows_, "n long, k string").coalesce(1).write.mode("append").parquet(twins)
    various = [(i, f"k{i % 3}") for i in range(sum(range(12, 150, 25)))]
    start = 0
    for count in range(12, 150, 25):  # six files of different sizes
        spark.createDataFrame(various[start:start + count], "n long, k string").coalesce(1).write.mode("append") \
            .parquet(many)
        start += count
    for folder, expected in ((twins, rows_ + rows_), (many, various)):
        frame = lc.read.parquet(folder)
        sizes = [p.stat().st_size for p in Path(folder).glob("part-*.parquet")]
        assert (len(sizes), len(set(sizes))) == ((2, 1) if folder == twins else (6, 6))
        per_key = frame.where(F.col("n") % 2 == 0).groupBy("k").agg(F.sum("n").alias("total"))
        assert sorted(map(tuple, per_key.collect())) == sorted(
            (k, sum(n for n, kk in expected if kk == k and n % 2 == 0)) for k in {"k0", "k1", "k2"})
        trace = per_key.getLineage().filter(where("k", "k1")).goBackAll()
        assert rows(trace.collect()) == rows([r for r in expected if r[1] == "k1" and r[0] % 2 == 0])
        # each position's row, read from its file by pyarrow, is the row the trace gave
        import pyarrow.parquet as pq
        for position, row in zip(trace.positions(), trace.collect(), strict=True):
            table = pq.read_table(position.source.removeprefix("file:"))
            assert (table["n"][position.offset].as_py(), table["k"][position.offset].as_py()) == tuple(row)


def test_groups_that_differ_only_by_where_their_nulls_are(lc: Any, spark: Any, tmp_path: Path) -> None:
    """Groups (null, x) and (x, null), and (null, null) against no key at all, are different
    groups: Spark's hash of a row skips its nulls, so the group's id must tell where they are."""
    from pyspark.sql import functions as F

    data = [(None, "x", 1), ("x", None, 2), (None, None, 3), ("x", "x", 4), (None, "x", 5), (None, None, 6)]
    path = str(tmp_path / "nulls")
    spark.createDataFrame(data, "a string, b string, n long").coalesce(1).write.parquet(path)
    frame = lc.read.parquet(path)
    per_pair = frame.groupBy("a", "b").agg(F.sum("n").alias("total"))
    same_results(per_pair, spark.read.parquet(path).groupBy("a", "b").agg(F.sum("n").alias("total")))
    def pair(key: tuple[Any, ...]) -> Callable[[Any], bool]:
        return lambda r: (r.a, r.b) == key

    for key in {(a, b) for a, b, _ in data}:
        assert back(per_pair, pair(key)) == rows([d for d in data if d[:2] == key]), key
    reached = frame.getLineage().filter(where("n", 2)).goNextAll().collect()
    assert [(r.a, r.b, r.total) for r in reached] == [("x", None, 2)]
    per_struct = frame.groupBy(F.struct("a", "b").alias("s")).agg(F.sum("n").alias("total"))
    assert rows(per_struct.collect()) == rows(frame.plain().groupBy(F.struct("a", "b").alias("s"))
                                              .agg(F.sum("n").alias("total")).collect())
    traced = back(per_struct, lambda r: (r.s.a, r.s.b) == (None, "x"))
    assert traced == rows([d for d in data if d[:2] == (None, "x")])


def test_large_groups_store_their_ids_as_bitmaps(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A task whose groups hold 1024 rows or more on average writes each group's ids as a bitmap
    (``TapTable.SET_IDS``); traces both ways and a what-if's fates read them as they read lists, a group
    with no row of one source included."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    sales = [(i, ["a", "b", "c", "d"][i % 4], i % 5) for i in range(6000)]
    shops = [(s, f"shop{s}") for s in range(4)]  # sales of shop 4 have no shop row
    for name, data, schema in (("sales", sales, "n long, k string, shop long"),
                               ("shops", shops, "shop long, name string")):
        spark.createDataFrame(data, schema).coalesce(1).write.parquet(str(tmp_path / name))
    sales_frame, shops_frame = lc.read.parquet(str(tmp_path / "sales")), lc.read.parquet(str(tmp_path / "shops"))
    joined = sales_frame.where((F.col("k") != "d") | (F.col("shop") == 4)).join(shops_frame, "shop", "left")
    frame = joined.coalesce(1).groupBy("k").agg(F.sum("n").alias("total"), F.count("name").alias("named"))
    kept = [s for s in sales if s[1] != "d" or s[2] == 4]
    assert sorted((r.k, r.total, r.named) for r in frame.collect()) == sorted(
        (k, sum(s[0] for s in kept if s[1] == k), sum(1 for s in kept if s[1] == k and s[2] != 4)) for k in "abcd")
    (groups,) = lc.store.point(frame._point).parents
    point = lc.store.point(groups)
    tables = [pq.read_table(point.table_path(p).removeprefix("file:")) for p in point.partition_rows(lc.store.fs)]
    assert tables and all(str(t.schema.field(c).type) == "binary" for t in tables for c in ("in_ids_0", "in_ids_1"))
    assert back(frame, where("k", "b")) == rows([s for s in kept if s[1] == "b"] + shops)
    assert back(frame, where("k", "d")) == rows([s for s in kept if s[1] == "d"])  # no shop row: a null set
    assert sorted(r.k for r in sales_frame.getLineage().filter(lambda r: r.n in (7, 8, 19)).goNextAll().collect()) == \
        ["a", "d"]
    assert sorted(r.k for r in shops_frame.getLineage().filter(where("shop", 1)).goNextAll().collect()) == \
        ["a", "b", "c"]
    impact = sales_frame.getLineage().filter(lambda r: r.k == "d").whatIfDeleted()
    assert [r.k for r in impact.dead()] == ["d"] and impact.reached() == []


def test_many_groups_and_unordered_ids_in_one_task(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A task keeps its first 256 groups apart as rows come, then appends rows and sorts them
    (``TapFew.FEW``): past 256 groups, and when a join hands a group its ids out of order, the tables
    hold the same lineage."""
    from pyspark.sql import functions as F

    data = [(i, i % 600, i % 7) for i in range(6000)]  # the join: 1285 rows a group, bitmaps
    path = str(tmp_path / "many")
    spark.createDataFrame(data, "n long, g long, c long").repartition(2).write.parquet(path)  # two files
    frame = lc.read.parquet(path).coalesce(1).groupBy("g").agg(F.sum("n").alias("total"))
    assert sorted(map(tuple, frame.collect())) == sorted((g, sum(d[0] for d in data if d[1] == g)) for g in range(600))
    for g in (3, 300, 599):
        assert back(frame, where("g", g)) == rows([d for d in data if d[1] == g])
    colours = [(c, f"colour{c}") for c in range(7)]
    cpath = str(tmp_path / "colours")
    spark.createDataFrame(colours, "c long, name string").coalesce(1).write.parquet(cpath)
    source = lc.read.parquet(path)
    joined = source.where(F.col("c") < 3).join(lc.read.parquet(cpath).hint("merge"), "c").coalesce(1) \
        .groupBy((F.col("n") % 2).alias("odd")).agg(F.count("*").alias("rows"))  # rows come sorted by c
    assert sorted(map(tuple, joined.collect())) == [(p, sum(1 for d in data if d[0] % 2 == p and d[2] < 3))
                                                     for p in (0, 1)]
    assert back(joined, where("odd", 1)) == rows([d for d in data if d[0] % 2 == 1 and d[2] < 3] + colours[:3])
    assert [r.odd for r in source.getLineage().filter(where("n", 9)).goNextAll().collect()] == [1]


def test_an_aggregate_over_five_sources_is_tapped_past_its_first_groups(lc: Any, spark: Any, tmp_path: Path) -> None:
    """An aggregate over the ids of more than three sources (a fact table and four dimensions, as
    TPC-DS 67's ROLLUP) is tapped as one over fewer is: a combiner point whose tables hold each
    source's ids of each group, here 400 groups in one task (its first 256 kept apart, the rest
    appended and sorted), traced exactly both ways."""
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    facts = [(n, n % 400, n % 5, n % 7, n % 11, n % 13) for n in range(3000)]
    spark.createDataFrame(facts, "n long, g long, k1 long, k2 long, k3 long, k4 long").coalesce(1) \
        .write.parquet(str(tmp_path / "facts"))
    source = lc.read.parquet(str(tmp_path / "facts"))
    joined = source
    dims = {}
    for d, size in enumerate((5, 7, 11, 13), start=1):
        dims[d] = [(k, f"d{d}-{k}") for k in range(size)]
        spark.createDataFrame(dims[d], f"k{d} long, name{d} string").coalesce(1).write.parquet(str(tmp_path / f"d{d}"))
        joined = joined.join(lc.read.parquet(str(tmp_path / f"d{d}")), f"k{d}")
    frame = joined.coalesce(1).groupBy("g").agg(F.sum("n").alias("total"), F.max("name4").alias("top"))
    assert sorted(map(tuple, frame.collect())) == sorted(
        (g, sum(f[0] for f in facts if f[1] == g), max(f"d4-{f[5]}" for f in facts if f[1] == g)) for g in range(400))
    (groups,) = lc.store.point(frame._point).parents
    point = lc.store.point(groups)
    assert point.kind == "combiner" and len(point.parents) == 5
    tables = [pq.read_table(point.table_path(p).removeprefix("file:")) for p in point.partition_rows(lc.store.fs)]
    assert sum(t.num_rows for t in tables) == 400
    assert all(f"in_ids_{s}" in t.column_names for t in tables for s in range(5))
    for g in (3, 255, 399):  # a group among the task's first 256 and past them
        mine = [f for f in facts if f[1] == g]
        expected = mine + [(k, name) for d in range(1, 5) for k, name in dims[d] if any(f[1 + d] == k for f in mine)]
        assert back(frame, where("g", g)) == rows(expected)
    assert [r.g for r in source.getLineage().filter(where("n", 1234)).goNextAll().collect()] == [1234 % 400]


def test_a_task_of_many_rows_and_fewer_groups_than_buckets(lc: Any, spark: Any, tmp_path: Path) -> None:
    """Past 256 groups a task sorts its rows by group in buckets of about 512 rows (``TapPairs``,
    ``TapBuckets``): with 300 groups over 200,000 rows most buckets hold one group, a few hold two
    or more."""
    from pyspark.sql import functions as F

    path = str(tmp_path / "range")
    spark.range(200_000).select(F.col("id").alias("n"), (F.col("id") * 7919 % 300).alias("g")) \
        .coalesce(1).write.parquet(path)
    source = lc.read.parquet(path)
    frame = source.groupBy("g").agg(F.count("*").alias("c"))
    counts = {g: sum(1 for n in range(200_000) if n * 7919 % 300 == g) for g in range(300)}
    assert sorted(map(tuple, frame.collect())) == sorted(counts.items())
    numbered = Numbered(lc, source)
    for g in (0, 7, 299):
        assert back_ids(frame, where("g", g)) == numbered.ids(n for n in range(200_000) if n * 7919 % 300 == g)
    g = 12345 * 7919 % 300
    assert numbered.forward(12345) == [(g, counts[g])]


def test_collect_gives_pyspark_rows_of_every_type(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A captured collect makes each row once from PySpark's own stream (``frame_io.split_collect``):
    its rows equal PySpark's, field names and nested rows included, with dates, timestamps,
    decimals, arrays of structs, maps and nulls."""
    import datetime
    import decimal

    from pyspark.sql import functions as F

    path = str(tmp_path / "typed")
    spark.createDataFrame(
        [(1, datetime.date(2026, 1, 2), datetime.datetime(2026, 1, 2, 3, 4, 5), decimal.Decimal("1.50"),
          [("a", 1)], {"k": 2}, ("x", None)),
         (2, None, None, None, None, None, None)],
        "n long, d date, t timestamp, m decimal(10,2), xs array<struct<s:string,i:int>>, mp map<string,int>, "
        "st struct<a:string,b:string>").write.parquet(path)

    def job(df: Any) -> Any:
        return df.withColumn("n2", F.col("n") * 2)

    got = job(lc.read.parquet(path)).collect()
    want = job(spark.read.parquet(path)).collect()
    assert [r.asDict(recursive=True) for r in got] == [r.asDict(recursive=True) for r in want]
    assert [r.__fields__ for r in got] == [r.__fields__ for r in want]
    assert got[0].st.a == "x" and got[0].xs[0].s == "a"
    per_n = job(lc.read.parquet(path)).groupBy("st").agg(F.count("*").alias("c"))
    assert sorted(repr((r.st and r.st.asDict(), r.c)) for r in per_n.collect()) == \
        sorted([repr(({"a": "x", "b": None}, 1)), repr((None, 1))])


def test_large_groups_fold_their_ids_into_bitmaps(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A group of a task's first 256 keeps its ids, in order, in bitmaps, 1024 at a time
    (``TapFew``, ``TapGroupIds``): a task of three large groups (its table holds bitmaps), a
    large group among 200 one-row groups (lists), and a large group before 300 more (the task
    passes 256 groups, its groups' ids handed over), traced both ways."""
    from pyspark.sql import functions as F

    n = 60_000
    cases = {"three": F.col("id") % 3,
             "skewed": F.when(F.col("id") < n - 200, 0).otherwise(F.col("id") - (n - 201)),
             "past_few": F.when(F.col("id") < n - 300, 0).otherwise(F.col("id") - (n - 301))}
    oracles = {"three": lambda i: i % 3, "skewed": lambda i: 0 if i < n - 200 else i - (n - 201),
               "past_few": lambda i: 0 if i < n - 300 else i - (n - 301)}
    for name, group in cases.items():
        path = str(tmp_path / name)
        spark.range(n).select(F.col("id").alias("n"), group.alias("g")).coalesce(1).write.parquet(path)
        source = lc.read.parquet(path)
        frame = source.groupBy("g").agg(F.count("*").alias("c"))
        of = oracles[name]
        counts = Counter(of(i) for i in range(n))
        assert sorted(map(tuple, frame.collect())) == sorted(counts.items()), name
        numbered = Numbered(lc, source)
        for g in (0, 1, max(counts)):
            assert back_ids(frame, where("g", g)) == numbered.ids(i for i in range(n) if of(i) == g), (name, g)
        assert back_ids(frame, lambda r: True) == numbered.ids(range(n)), name  # every group's
        for i in (7, n - 1):
            assert numbered.forward(i) == [(of(i), counts[of(i)])], (name, i)


def test_a_group_whose_ids_come_out_of_order_keeps_them_all(lc: Any, spark: Any, tmp_path: Path) -> None:
    """Rows sorted by a hash before they are grouped reach a group out of order, from two files
    at once (``TapGroupIds``: its list of ids is sorted at the end, not folded into bitmaps):
    every id is kept, traced both ways."""
    from pyspark.sql import functions as F

    n = 200_000  # four 16-bit chunks of row indexes a file
    path = str(tmp_path / "t")
    spark.range(2 * n).select(F.col("id").alias("n"), (F.col("id") % 3).alias("g")) \
        .repartitionByRange(2, "n").write.parquet(path)
    source = lc.read.parquet(path)
    frame = source.orderBy(F.xxhash64("n")).groupBy("g").agg(F.count("*").alias("c"))
    assert sorted(map(tuple, frame.collect())) == sorted(Counter(i % 3 for i in range(2 * n)).items())
    numbered = Numbered(lc, source)
    for g in range(3):
        assert back_ids(frame, where("g", g)) == numbered.ids(range(g, 2 * n, 3)), g
    for i in (0, n - 1, n, 2 * n - 1):
        assert numbered.forward(i) == [(i % 3, len(range(i % 3, 2 * n, 3)))], i


@pytest.mark.parametrize("case", ["dense", "first id off 64", "20 groups", "sparse", "twice", "file again",
                                  "group 255", "a page skipped"])
def test_dense_ids_marked_by_group_and_the_ids_that_leave_the_window(lc: Any, spark: Any, tmp_path: Path,
                                                                      case: str) -> None:
    """A task of few groups marks each id's group in a byte window of its file's ids, a page for
    each 65,536 (``TapWindow``), made the groups' bitmaps at the end (eight bytes at once for few
    groups, a file's first id inside its page too; a byte at a time for 20; a page's ids
    skipped by a filter: no page there, the next one started mid-way and grown), and moves them to
    the groups' lists at the first id that does not fit: ids eight times sparser than the window (one row in 16
    kept), each row read twice (a union of the source with itself shifted by one, in one task:
    of one file, an id twice, in another group; of two, the first file again), a 256th group.
    Each group traces back to its rows, and rows forward to their groups, in every case."""
    from pyspark.sql import functions as F

    n = 200_000
    path = str(tmp_path / "t")
    files = 1 if case in ("twice", "a page skipped") else 2
    spark.range(n).select(F.col("id").alias("n")).repartition(files).sortWithinPartitions("n").write.parquet(path)
    source = lc.read.parquet(path)
    groups, shifts, read, kept = 3, [0], source, list(range(n))
    if case == "sparse":
        kept = list(range(0, n, 16))
        read = source.where(F.col("n") % 16 == 0)
    elif case in ("twice", "file again"):
        shifts = [0, 1]
        read = source.union(source.select((F.col("n") + 1).alias("n")))
    elif case == "first id off 64":  # each file's rows of n < 37 (about 18) left out
        kept = list(range(37, n))
        read = source.where(F.col("n") >= 37)
    elif case == "20 groups":
        groups = 20
    elif case == "a page skipped":  # one file: row index n; none of the second page's, 65,536 to 131,071
        kept = [i for i in range(n) if not 60_000 <= i < 140_000]
        read = source.where((F.col("n") < 60_000) | (F.col("n") >= 140_000))
    elif case == "group 255":
        groups = 256
    frame = read.coalesce(1).groupBy((F.col("n") % groups).alias("g")).agg(F.count("*").alias("c"))
    expected: Counter[int] = Counter((i + shift) % groups for i in kept for shift in shifts)
    assert sorted(map(tuple, frame.collect())) == sorted(expected.items())
    numbered = Numbered(lc, source)
    for g in (0, 1, groups - 1):
        behind = (i for i in kept if any((i + sh) % groups == g for sh in shifts))
        assert back_ids(frame, where("g", g)) == numbered.ids(behind), g
    for i in (kept[0], kept[len(kept) // 2], kept[-1]):
        reached = {((i + sh) % groups, expected[(i + sh) % groups]) for sh in shifts}
        assert sorted(numbered.forward(i)) == sorted(reached), i


def test_a_group_whose_ids_turn_out_of_order_after_some_in_order(lc: Any, spark: Any, tmp_path: Path) -> None:
    """A group's first ids come in order and go into its bitmaps, 1024 at a time; then an id comes
    below them, and the group keeps the rest in its list (``TapGroupIds``): the table holds the
    bitmaps' ids and the list's, sorted together, traced both ways."""
    from pyspark.sql import functions as F

    n = 10_000
    path = str(tmp_path / "t")
    spark.range(n).select(F.col("id").alias("n"), (F.col("id") % 2).alias("g")).coalesce(1).write.parquet(path)
    source = lc.read.parquet(path)
    # one task: 7000..9999 (1500 ids a group, in order), then 0..6999
    frame = source.repartition(1).sortWithinPartitions((F.col("n") + 3000) % n) \
        .groupBy("g").agg(F.count("*").alias("c"), F.min("n").alias("low"))
    assert sorted(map(tuple, frame.collect())) == [(0, n // 2, 0), (1, n // 2, 1)]
    numbered = Numbered(lc, source)
    for g in (0, 1):
        assert back_ids(frame, where("g", g)) == numbered.ids(range(g, n, 2)), g
    for i in (0, 6999, 7000, n - 1):
        assert numbered.forward(i) == [(i % 2, n // 2, i % 2)], i
