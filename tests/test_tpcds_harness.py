"""The TPC-DS harness (tests/tpcds.py): tables generated at a tiny scale, a few queries run plain on
Spark, their answers checked against DuckDB's own answers of the same queries on the same files."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import tpcds
from tests.spark_fixtures import spark  # noqa: F401 - the session-wide SparkSession fixture
from tests.tpcds_answers import diff_rows

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(not tpcds.available(), reason="duckdb or duckdb-extension-tpcds is not installed"),
]

SF = 0.01
# 7: a five-way join, grouped; 12: a window over an aggregate; 62: a query whose aliases the dialect
# edits backquote; 96: a count over a three-way join. Each returns rows at this scale.
QUERIES = (7, 12, 62, 96)


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory, spark) -> Iterator[dict[str, str]]:  # noqa: F811
    """The tables at SF, registered as temp views of the shared session while this module runs."""
    made = tpcds.generate(str(tmp_path_factory.mktemp("tpcds")), SF)
    tpcds.register(spark, made)
    yield made
    for name in made:
        spark.catalog.dropTempView(name)


def test_generate_writes_the_24_tables_once_with_spark_types(tables, spark):  # noqa: F811
    assert sorted(tables) == sorted(tpcds.TABLES) and len(tables) == 24
    part = Path(tables["item"]) / "part-0.parquet"
    written = part.stat().st_mtime_ns
    assert tpcds.generate(str(Path(tables["item"]).parent.parent), SF) == tables
    assert part.stat().st_mtime_ns == written  # reused, not made again
    duck = tpcds.duckdb_over(tables)
    in_spark = {"BIGINT": "bigint", "INTEGER": "int", "VARCHAR": "string", "DATE": "date"}  # DECIMAL(7,2): decimal(7,2)
    for name in tables:
        columns = duck.execute(f"DESCRIBE {name}").fetchall()
        want = [(column, in_spark.get(kind, kind.lower())) for column, kind, *_ in columns]
        assert [(f.name, f.dataType.simpleString()) for f in spark.table(name).schema.fields] == want
    assert spark.table("store_sales").schema["ss_sales_price"].dataType.simpleString() == "decimal(7,2)"
    assert spark.table("date_dim").schema["d_date"].dataType.simpleString() == "date"
    (customers,) = duck.execute("SELECT count(*) FROM customer").fetchone()
    assert spark.table("customer").count() == customers > 0


def test_the_99_queries_are_in_spark_dialect():
    texts = tpcds.queries()
    assert sorted(texts) == list(range(1, 100))
    assert not [n for n, text in texts.items() if '"' in text or text.rstrip().endswith(";")]


@pytest.mark.parametrize("number", QUERIES)
def test_a_query_answers_on_spark_as_duckdb_does(tables, spark, number):  # noqa: F811
    got = [tuple(row) for row in spark.sql(tpcds.queries()[number]).collect()]
    want = tpcds.duckdb_over(tables).execute(tpcds.duckdb_queries()[number]).fetchall()
    assert len(got) == len(want) > 0
    assert diff_rows(want, got, rel_tol=1e-6, abs_tol=1e-6) is None


def test_a_query_that_reads_a_table_in_two_roles_is_checked_with_them_apart():
    from tests.tpcds_oracles import ROLES, apart_text

    texts = tpcds.queries()
    assert [n for n, text in texts.items() if apart_text(text)[1]] == [44]  # each mark still in DuckDB's text
    text, names = apart_text(texts[44])
    assert names == {"store_sales_role2": "store_sales"} and len(ROLES) == 1
    # both of the scalar subquery's readings renamed; the ranked groups still read store_sales
    assert text.count("FROM store_sales_role2") == 2 and text.count("FROM store_sales ss1") == 2
