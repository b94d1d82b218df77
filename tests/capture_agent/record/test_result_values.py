"""A trace's result is written with its records' ids and places, values only for its first page
(``query.results.write_result``); a page read fetches the values of that page's records alone
(``read_page``), a download a row group at a time (``iter_records``), and both give the rows the
source file holds at those places."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap64

from capture_agent.record import LineageRun
from capture_agent.record.errors import ValuesNotAvailable
from capture_agent.record.query.questions import select, walk
from capture_agent.record.query.results import LATER, iter_records, read_page, session_values, write_result
from capture_agent.record.query.values import ValueReader

pytestmark = pytest.mark.spark

ROWS = 20_000


class CountingReader(ValueReader):
    """The run's value reader, counting the records whose values it is asked for."""

    asked = 0

    def values(self, point: Any, ids: BitMap64, predicate: Any = None) -> list[tuple[int, Any]]:
        self.asked += len(ids)
        return super().values(point, ids, predicate)


@pytest.fixture
def traced(lc: Any, tmp_path: Path) -> tuple[LineageRun, Any, dict[tuple[str, int], dict[str, Any]], str]:
    """A Parquet file of 20,000 rows (n, g = n % 13, s) counted by g, captured; the backward trace of
    g = 5's count: (the run, its answer, the file's rows by (path, row index), the path)."""
    from pyspark.sql import functions as F

    folder = tmp_path / "numbers"
    folder.mkdir()
    ns = list(range(ROWS))
    pq.write_table(pa.table({"n": ns, "g": [n % 13 for n in ns], "s": [f"row {n}" for n in ns]}),
                   str(folder / "part-0.parquet"), row_group_size=2000)
    counts = lc.read.parquet(str(folder)).groupBy("g").agg(F.count("*").alias("c")).collect()
    row = next(i for i, r in enumerate(counts) if r.g == 5)
    run = LineageRun(lc.run_dir)
    output = run.outputs()[-1].capture_id
    answer = walk(run.session, select(run.session, output, ids=[row]), "backward", "end")
    source = pq.read_table(str(folder / "part-0.parquet")).to_pylist()
    return run, answer, {(str(folder / "part-0.parquet"), i): r for i, r in enumerate(source)}, \
        f"{run.store.run_dir}/traces/t.parquet"


def _oracle(rows: dict[tuple[str, int], dict[str, Any]], record: dict[str, Any]) -> dict[str, Any]:
    return rows[(record["file"].removeprefix("file://").removeprefix("file:"), record["offset"])]


def test_a_result_is_written_with_the_values_of_its_first_page_only(traced):
    run, answer, rows, path = traced
    counting = CountingReader(run.engine)
    run.session.values = counting
    summary = write_result(run.session, answer.result, path, first_page=50, keep_all=1000)
    assert summary.count == answer.count == len([n for n in range(ROWS) if n % 13 == 5]) > 1000
    # the first page's values, and one more per point (does it keep values?); not the other 1,450
    assert counting.asked <= 50 + len(summary.by_point), counting.asked
    assert len(summary.first_page) == 50 and all(r["value"] == _oracle(rows, r) for r in summary.first_page)
    later = pq.read_table(path, columns=[LATER]).column(LATER).to_pylist()
    assert later == [False] * 50 + [True] * (summary.count - 50)


def test_a_page_reads_the_values_of_its_own_records_and_they_are_the_source_rows(traced):
    run, answer, rows, path = traced
    summary = write_result(run.session, answer.result, path, first_page=50, keep_all=1000)
    fetch = session_values(run.session)
    asked: list[int] = []

    def counted(cid: str, ids: BitMap64) -> dict[int, Any]:
        asked.extend(ids)
        return fetch(cid, ids)

    seen = []
    for start in range(0, summary.count, 100):
        asked.clear()
        total, page = read_page(run.store.fs, path, start, 100, values=counted)
        assert total == summary.count and len(page) == min(100, total - start)
        # only this page's records are read from the source, those the file holds no value of
        assert sorted(asked) == sorted(r["record_id"] for i, r in enumerate(page) if start + i >= 50)
        assert all(r["value"] == _oracle(rows, r) for r in page)
        seen.extend(page)
    assert sorted(r["value"]["n"] for r in seen) == [n for n in range(ROWS) if n % 13 == 5]
    assert list(iter_records(run.store.fs, path, fetch)) == seen
    point = next(iter(summary.by_point))
    assert read_page(run.store.fs, path, 60, 10, point, fetch) == (summary.count, seen[60:70])


def test_a_page_whose_values_are_left_for_later_needs_a_value_reader(traced):
    run, answer, _, path = traced
    write_result(run.session, answer.result, path, first_page=50, keep_all=1000)
    assert len(read_page(run.store.fs, path, 0, 50)[1]) == 50  # the first page's values are in the file
    with pytest.raises(ValuesNotAvailable):
        read_page(run.store.fs, path, 50, 10)


def test_an_answer_within_the_bound_keeps_every_value(traced):
    """An answer of at most ``keep_all`` records is written whole: no page reads its inputs again
    (it stays readable if they are overwritten)."""
    run, answer, rows, path = traced
    counting = CountingReader(run.engine)
    run.session.values = counting
    summary = write_result(run.session, answer.result, path, first_page=50, keep_all=summary_size(answer))
    assert counting.asked == summary.count
    assert not any(pq.read_table(path, columns=[LATER]).column(LATER).to_pylist())
    total, page = read_page(run.store.fs, path, 60, 100)  # no value reader: the file holds them
    assert total == summary.count and all(r["value"] == _oracle(rows, r) for r in page)


def summary_size(answer: Any) -> int:
    return sum(len(ids) for ids in answer.result.values())
