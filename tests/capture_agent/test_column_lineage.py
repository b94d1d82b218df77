"""The listener's column lineage of written datasets, against the lineage written out by hand.

Real PySpark (local mode) runs each query over two Parquet datasets, ``a`` (id, name, amount, dept)
and ``b`` (id, city); the agent's ``dataset_io`` event of the written dataset carries the
``column_lineage`` facet, compared here with what each output column was worked out to come from.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import capture_agent
from capture_agent import CollectingSink
from capture_agent.column_lineage import openlineage_name
from tests.ingest_schema import assert_valid_events

pytestmark = pytest.mark.spark

Oracle = tuple[dict[str, set[tuple[str, str, str]]], set[tuple[str, str, str]]]
ID, TR, AGG, COND = "DIRECT/IDENTITY", "DIRECT/TRANSFORMATION", "DIRECT/AGGREGATION", "INDIRECT/CONDITIONAL"

# query -> (output column -> {(input dataset, column, type/subtype)}, {(input dataset, column, subtype)}
# of the columns that decide the rows)
CASES: dict[str, tuple[str, Oracle]] = {
    "projection": ("select id, name as who from a",
                   ({"id": {("a", "id", ID)}, "who": {("a", "name", ID)}}, set())),
    "expressions and a filter": (
        "select id, upper(name) n, amount * 2 + id a2, 'x' k from a where amount > 5",
        ({"id": {("a", "id", ID)}, "n": {("a", "name", TR)},
          "a2": {("a", "amount", TR), ("a", "id", TR)}, "k": set()},
         {("a", "amount", "FILTER")})),
    "aggregate": (
        "select dept, sum(amount) s, count(*) c, max(length(name)) m from a group by dept",
        ({"dept": {("a", "dept", ID)}, "s": {("a", "amount", AGG)}, "c": set(), "m": {("a", "name", AGG)}},
         {("a", "dept", "GROUP_BY")})),
    "join and sort": (
        "select a.id, b.city, a.amount from a join b on a.id = b.id order by b.city",
        ({"id": {("a", "id", ID)}, "city": {("b", "city", ID)}, "amount": {("a", "amount", ID)}},
         {("a", "id", "JOIN"), ("b", "id", "JOIN"), ("b", "city", "SORT")})),
    "union": (
        "select id, name from a union all select id, city from b",
        ({"id": {("a", "id", ID), ("b", "id", ID)}, "name": {("a", "name", ID), ("b", "city", ID)}}, set())),
    "window": (
        "select id, rank() over (partition by dept order by amount) r,"
        " sum(amount) over (partition by dept) total, lag(name) over (order by id) prev from a",
        ({"id": {("a", "id", ID)}, "r": set(), "total": {("a", "amount", AGG)}, "prev": {("a", "name", TR)}},
         {("a", "dept", "WINDOW"), ("a", "amount", "WINDOW"), ("a", "id", "WINDOW")})),
    "case when": (
        "select id, case when amount > 15 then name else city end v from a left join b using (id)",
        ({"id": {("a", "id", ID)}, "v": {("a", "name", TR), ("b", "city", TR), ("a", "amount", COND)}},
         {("a", "id", "JOIN"), ("b", "id", "JOIN")})),
    "cte": (
        "with big as (select id, dept, amount from a where amount > 5),"
        " per as (select dept, avg(amount) mean from big group by dept)"
        " select big.id, per.mean from big join per on big.dept = per.dept",
        ({"id": {("a", "id", ID)}, "mean": {("a", "amount", AGG)}},
         {("a", "amount", "FILTER"), ("a", "dept", "GROUP_BY"), ("a", "dept", "JOIN")})),
    "subqueries": (
        "select id, (select max(id) from b) top from a where id in (select id from b where city <> 'q')",
        ({"id": {("a", "id", ID)}, "top": {("b", "id", AGG)}},
         {("a", "id", "FILTER"), ("b", "id", "FILTER"), ("b", "city", "FILTER")})),
    "correlated exists": (
        "select name from a where exists (select 1 from b where b.id = a.id)",
        ({"name": {("a", "name", ID)}}, {("a", "id", "FILTER"), ("b", "id", "FILTER")})),
}


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("columns")
    spark.createDataFrame([(1, "ann", 10.0, "x"), (2, "bob", 20.0, "y"), (3, "cy", 30.0, "x")],
                          ["id", "name", "amount", "dept"]).write.parquet(str(root / "a"))
    spark.createDataFrame([(1, "paris"), (3, "q")], ["id", "city"]).write.parquet(str(root / "b"))
    for name in ("a", "b"):
        spark.read.parquet(str(root / name)).createOrReplaceTempView(name)
    yield root
    for name in ("a", "b"):
        spark.catalog.dropTempView(name)


def written_lineage(spark: Any, root: Path, write: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Runs ``write(target)`` with the agent on; the written event's facet, and all the events."""
    target = root / f"out{len(list(root.iterdir()))}"
    sink = CollectingSink()
    agent = capture_agent.enable(spark, sink=sink)
    try:
        write(str(target))
        agent.flush()
    finally:
        capture_agent.disable()
    written = [e for e in sink.events if e["type"] == "dataset_io" and e["direction"] == "written"
               and e["path"] == f"file:{target}"]
    assert len(written) == 1, sink.events
    return written[0]["column_lineage"], sink.events


def as_oracle(facet: dict[str, Any], root: Path) -> Oracle:
    def short(item: dict[str, Any]) -> str:
        path = f"{item['namespace']}:{item['name']}"
        assert path.startswith(f"file:{root}/"), path
        return path.rsplit("/", 1)[-1]

    fields = {column: {(short(i), i["field"], f"{t['type']}/{t['subtype']}")
                       for i in value["inputFields"] for t in i["transformations"]}
              for column, value in facet["fields"].items()}
    dataset = set()
    for item in facet["dataset"]:
        for t in item["transformations"]:
            assert t["type"] == "INDIRECT"
            dataset.add((short(item), item["field"], t["subtype"]))
    return fields, dataset


@pytest.mark.parametrize("case", list(CASES))
def test_sql_query_column_lineage_is_the_hand_written_one(spark: Any, tables: Path, case: str) -> None:
    query, expected = CASES[case]
    facet, events = written_lineage(spark, tables, lambda out: spark.sql(query).write.parquet(out))
    assert as_oracle(facet, tables) == expected
    assert_valid_events(events)


def test_dataframe_api_and_explode(spark: Any, tables: Path) -> None:
    from pyspark.sql import functions as F

    def write(out: str) -> None:
        a = spark.read.parquet(str(tables / "a"))
        (a.withColumn("letters", F.explode(F.split("name", "")))
         .groupBy("dept", "letters").agg(F.countDistinct("id").alias("ids"))
         .withColumnRenamed("dept", "department").write.parquet(out))

    facet, _ = written_lineage(spark, tables, write)
    assert as_oracle(facet, tables) == (
        {"department": {("a", "dept", ID)}, "letters": {("a", "name", TR)}, "ids": {("a", "id", AGG)}},
        {("a", "dept", "GROUP_BY"), ("a", "name", "GROUP_BY")})


def test_a_write_of_rows_made_in_python_has_columns_without_inputs(spark: Any, tables: Path) -> None:
    facet, _ = written_lineage(
        spark, tables, lambda out: spark.createDataFrame([(1, "x")], ["k", "v"]).write.parquet(out))
    assert facet == {"fields": {"k": {"inputFields": []}, "v": {"inputFields": []}}, "dataset": []}


@pytest.mark.parametrize(("path", "name"), [
    ("file:/data/x", ("file", "/data/x")),
    ("hdfs://nn:8020/data/x", ("hdfs://nn:8020", "/data/x")),
    ("s3a://bucket/key/part", ("s3a://bucket", "/key/part")),
    ("default.sales", ("", "default.sales")),
])
def test_openlineage_names_of_paths(path: str, name: tuple[str, str]) -> None:
    assert openlineage_name(path) == name
