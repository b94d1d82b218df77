"""Reading a trace's source rows (``storage.tables.take_rows``: a row group decoded a batch at a time
up to its last wanted row) gives what reading the whole file and taking the rows gives, in the order
asked; and a result's JSON text of a record (``query.results.json_text``, a fast path for flat
Rows) is ``json.dumps(json_value(record))``."""

from __future__ import annotations

import datetime
import decimal
import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import Row

from capture_agent.record.query.results import json_text, json_value
from capture_agent.record.storage import tables
from capture_agent.record.storage.tables import take_rows


@pytest.fixture
def source(tmp_path, monkeypatch):
    """A Parquet file of 10,000 rows in row groups of 1,000, batches of 64 rows: (the open file, its rows)."""
    monkeypatch.setattr(tables, "TAKE_BATCH", 64)
    n = 10_000
    table = pa.table({"id": pa.array(range(n), pa.int64()), "name": [f"r{i}" if i % 7 else None for i in range(n)],
                      "amount": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(9, 2))})
    pq.write_table(table, tmp_path / "part-0.parquet", row_group_size=1000)
    return pq.ParquetFile(tmp_path / "part-0.parquet"), table


@pytest.mark.parametrize("rows", [
    [0], [9_999], [999, 1000], [5, 3, 5, 4_321, 0],  # unsorted, repeated: in the order asked
    sorted(random.Random(3).sample(range(10_000), 300)), random.Random(4).sample(range(10_000), 50),
    [10_000, 12, 20_000],  # past the end: left out
])
def test_taking_rows_reads_what_the_whole_file_holds_at_them(source, rows):
    pf, table = source
    wanted = [r for r in rows if r < table.num_rows]
    assert take_rows(pf, None, rows).equals(table.take(wanted))
    assert take_rows(pf, ["name"], rows).equals(table.select(["name"]).take(wanted))


def test_taking_no_rows_or_every_row(source):
    pf, table = source
    assert take_rows(pf, None, []).num_rows == 0
    assert take_rows(pf, None, [20_000]).schema == table.schema
    assert take_rows(pf, None, None).equals(table)


@pytest.mark.parametrize("value", [
    Row(a=1, b="x", c=None, d=2.5, e=True),
    Row(day=datetime.date(2001, 3, 4), at=datetime.datetime(2001, 3, 4, 5, 6), price=decimal.Decimal("1.20")),
    Row(nested=Row(x=1), items=[1, 2], tags={"k": datetime.date(2000, 1, 1)}, raw=b"ab"),
    ("word", 3), [1, (2, 3)], {1: "a"}, "text", None, decimal.Decimal("3.5"), {3, 1},
])
def test_a_records_json_text_is_its_json_value_dumped(value):
    assert json_text(value) == json.dumps(json_value(value))
