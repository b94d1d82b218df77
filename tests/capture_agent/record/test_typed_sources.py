"""A DataFrame source's records are the rows its frame read (``storage.spark_rows``): at JSON
Lines, CSV (a header with inferSchema, and a given schema), Parquet and ORC sources, read with a
LineageContext and by an unmodified job, the records equal, types included, the rows
``spark.read`` gives for the same files; a predicate by column matches them, and one naming a
column the source does not have is refused naming the columns it has."""

from __future__ import annotations

import datetime
import decimal
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from capture_agent.record.worker.predicates import PredicateError

pytestmark = pytest.mark.spark

CUSTOMERS: list[dict[str, Any]] = [
    {"customer_id": i, "name": f"n{i}", "score": i * 1.5, "active": i % 2 == 0,
     "joined": f"2024-0{1 + i % 9}-1{i % 10}", "address": {"city": ["Oslo", "Rome"][i % 2], "zip": 1000 + i},
     "tags": ["a", "b"][: i % 3]}
    for i in range(12)
]
CUSTOMERS[3] = {"customer_id": 3, "name": None, "score": 7}  # fields missing, an int where doubles go
JSON_SCHEMA = ("customer_id int, name string, score double, active boolean, joined date, "
               "address struct<city:string,zip:bigint>, tags array<string>")
CSV_LINES = ["id,amount,price,paid,day,at,note",
             *[f"{i},{i * 10},{i / 4},{'true' if i % 3 else 'false'},2024-03-{10 + i},2024-03-{10 + i} 08:30:00,"
               f"\"n, {i}\"" for i in range(1, 10)],
             "10,,2.5,,,,", "11,x,1,true,2024-03-01,2024-03-01 00:00:00,bad amount"]
CSV_SCHEMA = "id long, amount int, price decimal(6,2), paid boolean, day date, at timestamp, note string"


def typed(rows: Any) -> list[str]:
    """Rows as sortable text that tells types apart (1 from 1.0, a date from its text)."""
    return sorted(repr(r) for r in rows)


def write_inputs(folder: Path, spark: Any) -> dict[str, str]:
    folder.mkdir()
    customers = folder / "customers.json"
    customers.write_text("".join(json.dumps(c) + "\n" for c in CUSTOMERS))
    amounts = folder / "amounts.csv"
    amounts.write_text("\n".join(CSV_LINES) + "\n")
    frame = spark.createDataFrame(
        [(i, f"p{i}", decimal.Decimal(f"{i}.25"), datetime.date(2024, 1, 1 + i), datetime.datetime(2024, 1, 1, i, 5),
          [i, i + 1], {"k": i}, (i * 0.5, "x"), bytearray(b"ab")) for i in range(6)] + [(6, *([None] * 8))],
        "id long, name string, price decimal(8,2), day date, at timestamp, ns array<int>, m map<string,int>, "
        "s struct<v:double,w:string>, raw binary")
    frame.coalesce(1).write.parquet(str(folder / "items.parquet"))
    frame.drop("raw").coalesce(1).write.orc(str(folder / "items.orc"))
    return {"json": str(customers), "csv": str(amounts), "parquet": str(folder / "items.parquet"),
            "orc": str(folder / "items.orc")}


READS: dict[str, Callable[[Any, dict[str, str]], Any]] = {
    "json inferred": lambda r, p: r.json(p["json"]),
    "json given": lambda r, p: r.json(p["json"], schema=JSON_SCHEMA),
    "csv inferSchema": lambda r, p: r.csv(p["csv"], header=True, inferSchema=True),
    "csv given": lambda r, p: r.csv(p["csv"], header=True, schema=CSV_SCHEMA),
    "parquet": lambda r, p: r.parquet(p["parquet"]),
    "orc": lambda r, p: r.orc(p["orc"]),
}


def source_records(lc: Any) -> list[Any]:
    """Every record of the last input point of ``lc``'s run."""
    point = [p for p in lc.store.by_seq() if p.kind == "input"][-1]
    return lc.lineage(point.capture_id).collect()


@pytest.mark.parametrize("how", list(READS))
def test_records_at_a_source_are_the_rows_sparks_reader_gives(lc: Any, spark: Any, tmp_path: Path, how: str) -> None:
    paths = write_inputs(tmp_path / "in", spark)
    expected = READS[how](spark.read, paths).collect()
    READS[how](lc.read, paths).collect()
    got = source_records(lc)
    assert typed(got) == typed(expected)
    assert any(isinstance(v, int) and not isinstance(v, bool) for v in got[0])  # typed, not text


@pytest.mark.parametrize("how", ["json inferred", "csv inferSchema", "parquet"])
def test_an_unmodified_jobs_source_records_are_its_rows(spark: Any, tmp_path: Path, how: str) -> None:
    from capture_agent.record.capture import implicit

    paths = write_inputs(tmp_path / "in", spark)
    expected = READS[how](spark.read, paths).collect()
    lc = implicit.enable_records(spark, str(tmp_path / "lineage"))
    try:
        READS[how](spark.read, paths).where("1 = 1").collect()
        assert typed(source_records(lc)) == typed(expected)
    finally:
        implicit.disable_records(spark)


def test_a_predicate_by_column_selects_at_a_json_source(lc: Any, spark: Any, tmp_path: Path) -> None:
    from capture_agent.record.query.questions import select

    paths = write_inputs(tmp_path / "in", spark)
    frame = lc.read.json(paths["json"])
    frame.collect()
    point = [p for p in lc.store.by_seq() if p.kind == "input"][-1]
    session = lc.lineage_session
    chosen = select(session, point.capture_id, predicate={"field": "customer_id", "op": "equals", "value": 5})
    assert [r.customer_id for r in lc.lineage(point.capture_id, list(chosen[point.capture_id])).collect()] == [5]
    rome = select(session, point.capture_id, predicate={"field": ["address", "city"], "op": "equals", "value": "Rome"})
    in_rome = [c for c in CUSTOMERS if "address" in c and c["address"]["city"] == "Rome"]
    assert len(rome[point.capture_id]) == len(in_rome)
    with pytest.raises(PredicateError, match="'custid' is not a column .* its columns: active, address, customer_id"):
        select(session, point.capture_id, predicate={"field": "custid", "op": "equals", "value": 5})
