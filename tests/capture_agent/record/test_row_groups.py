"""Row groups of the lineage tables (``storage.tables.group_bounds``): a combiner table shaped as a
word count's (its first keys holding most ids, Zipf-like), written by its layout's own writer in one
go and by a spilling task in pieces, is cut every ``ROW_GROUP_IDS`` ids or so, a row holding more
alone; every row reads back alone as written, and a backward step gives each row's ids. Tables
without lists keep their groups of rows."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap64

from capture_agent.record.query.session import TraceSession
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.layouts import FirstRestLocal, Values
from capture_agent.record.storage.manifest import LineageStore
from capture_agent.record.storage.tables import (
    ROW_GROUP,
    ROW_GROUP_HEADS,
    ROW_GROUP_IDS,
    TableStream,
    TableTarget,
    read_rows,
    write_parquet,
)


def zipf_lists(rows: int, seed: int) -> list[list[int]]:
    """Each key's sorted positions, the first keys in many positions (a word count's first-seen words)."""
    rng = random.Random(seed)
    return [sorted(rng.sample(range(1 << 20), max(1, int(300_000 / (k + 1) ** 1.1)))) for k in range(rows)]


def groups(path: Any) -> list[tuple[int, int]]:
    """(rows, ids in the lists) of each row group of a table."""
    meta = pq.ParquetFile(path).metadata
    return [(meta.row_group(g).num_rows, sum(meta.row_group(g).column(c).num_values
                                             for c in range(meta.num_columns)
                                             if meta.row_group(g).column(c).path_in_schema.endswith(".element")))
            for g in range(meta.num_row_groups)]


@pytest.mark.parametrize("pieces", [1, 3])
def test_a_word_count_shaped_table_is_cut_by_ids_and_every_row_reads_back(tmp_path, pieces):
    lists = zipf_lists(6000, seed=pieces)
    store = LineageStore.create(StoreFS.resolve(str(tmp_path / "store")), "app-rows")
    inp = store.new_point("input", "op", Values(), [], 1)
    point = store.new_point("combiner", "op", FirstRestLocal(), [inp], 1)
    target = TableTarget.of(store.fs, point.location, point.capture_id)
    if pieces == 1:
        FirstRestLocal.write(target, 0, pa.array(lists, pa.list_(pa.uint32())))
    else:  # a task that spilled: its table written in pieces, then published once
        stream = TableStream(target, 0)
        cuts = [0, 7, 2500, len(lists)]
        for a, b in zip(cuts, cuts[1:], strict=False):
            FirstRestLocal.write(stream, 0, pa.array(lists[a:b], pa.list_(pa.uint32())))
        assert stream.close()
    path = point.table_path(0)
    found = groups(path)
    assert sum(rows for rows, _ in found) == len(lists) and len(found) > len(lists) // ROW_GROUP_HEADS + 2
    for rows, ids in found:
        assert rows <= ROW_GROUP_HEADS
        assert rows == 1 or ids <= 2 * ROW_GROUP_IDS, (rows, ids)  # a group past the bound ends at its row
    for row in [0, 1, 2, 5, 40, 999, 2500, len(lists) - 1]:
        table = read_rows(store.fs, path, ["first", "rest"], [row])
        assert [table.column("first")[0].as_py(), *table.column("rest")[0].as_py()] == lists[row]
    engine = TraceSession(store).engine
    for row in [0, 3, 4000]:
        assert engine.backward(point, BitMap64([row])) == {inp.capture_id: BitMap64(lists[row])}


def test_tables_without_lists_keep_their_row_groups(tmp_path):
    path = tmp_path / "offsets.parquet"
    rows = 2 * ROW_GROUP + 5
    write_parquet(str(path), {"out_id": pa.array(range(rows), pa.int64()),
                              "offset": pa.array(range(rows), pa.uint32())})
    assert [n for n, _ in groups(path)] == [ROW_GROUP, ROW_GROUP, 5]
    empty = tmp_path / "empty.parquet"
    write_parquet(str(empty), {"out_id": pa.array([], pa.int64()), "rest": pa.array([], pa.list_(pa.uint32()))})
    assert pq.read_table(empty).num_rows == 0
