"""The combiner and reducer lists stored as each list's first id and the rest: ``first_rest_*``.

| layout | columns (first: null when the row has no input) | meaning, modes |
|---|---|---|
| first_rest_local | out_id, first (uint32), rest (list<uint32>) | as list_local |
| first_rest_global | out_id, first (int64), rest (list<int64>) | as list_global |

A row's inputs are ``first`` and then ``rest``: the same ids as the ``list_*`` layouts keep, in
the same order. Rows are keys in first-seen order, so each row's first id grows with the row:
Parquet's delta encoding keeps it in a bit or two, where in one flat list the later ids of a few
keys (a jump back and forth every few rows) made every 32-value miniblock as wide as the widest
jump. On the word count over millions of distinct words the tables are a fifth of the lists'
size (``docs/benchmarks.md``). Their row groups are larger too (``tables.ROW_GROUP_HEADS``): a
row group's own footer entry and page headers cost more than its rows.

The ``list_*`` layouts stay for the runs stored before these (and read the same ids).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pyroaring import BitMap, BitMap64

from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import lift
from capture_agent.record.storage.layouts.base import dense_out_ids, list_rows_meeting, uint32_values
from capture_agent.record.storage.layouts.counts import lifted, lists_of_one
from capture_agent.record.storage.layouts.local import ListLocal
from capture_agent.record.storage.layouts.shuffled import ListGlobal
from capture_agent.record.storage.tables import TableSink, read_rows

HEAD_COLUMNS = ("first", "rest")


def _array(column: Any) -> Any:
    return column.combine_chunks() if hasattr(column, "combine_chunks") else column


def split_lists(lists: Any) -> dict[str, Any]:
    """A ListArray's lists as the columns ``first`` (each list's first item, null for an empty
    list) and ``rest`` (the items after it), in C++."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lists = _array(lists)
    lengths = pc.fill_null(pc.list_value_length(lists), 0)
    nonempty = pc.greater(lengths, 0)
    if pc.all(nonempty).as_py() is not False:  # every list has an item (or there are none)
        first = pc.list_element(lists, 0) if len(lists) else pa.array([], lists.type.value_type)
    else:
        heads = pc.list_element(lists.filter(nonempty), 0)
        first = pc.replace_with_mask(pa.nulls(len(lists), lists.type.value_type), nonempty, heads)
    return {"first": first, "rest": pc.list_slice(lists, 1)}


def joined_lists(first: Any, rest: Any) -> Any:
    """The ListArray ``split_lists`` split: each row's ``first`` (unless null), then its ``rest``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    first, rest = _array(first), _array(rest)
    n = len(first)
    tail = pc.list_flatten(rest)
    rest_offsets = rest.offsets.to_numpy().astype(np.int64)
    rest_offsets -= rest_offsets[0] if n else 0
    has = first.is_valid().to_numpy(zero_copy_only=False) if n else np.zeros(0, bool)
    offsets = rest_offsets + np.concatenate(([0], np.cumsum(has, dtype=np.int64)))
    heads_at = offsets[:-1][has]
    is_head = np.zeros(int(offsets[-1]) if n else 0, bool)
    is_head[heads_at] = True
    order = np.empty(len(is_head), np.int64)
    order[is_head] = np.flatnonzero(has)
    order[~is_head] = n + np.arange(len(tail), dtype=np.int64)
    values = pa.concat_arrays([first, tail]).take(pa.array(order))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)


def all_items(first: Any, rest: Any) -> Any:
    """Every id of the rows (firsts that are not null, and the rests), as one array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pa.concat_arrays([_array(first).drop_null(), pc.list_flatten(_array(rest))])


def rows_meeting(first: Any, rest: Any, wanted: Any) -> list[int]:
    """Rows whose first id or any later id is in ``wanted`` (a pyarrow array of the ids' type)."""
    import pyarrow.compute as pc

    hits = pc.indices_nonzero(pc.fill_null(pc.is_in(_array(first), value_set=wanted), False)).to_pylist()
    return sorted(set(hits).union(list_rows_meeting(rest, wanted)))


def table_rows_meeting(store: StoreFS, path: str, ids: Any, kind: str) -> list[int]:
    """``rows_meeting`` of one table, ``ids`` given as an array of ``kind`` (uint32, int64)."""
    import pyarrow as pa

    table = read_rows(store, path, list(HEAD_COLUMNS))
    return rows_meeting(table.column("first"), table.column("rest"), pa.array(ids, getattr(pa, kind)()))


def write_first_rest(target: TableSink, part: int, lists: Any) -> None:
    """``lists``: a ListArray of ids, one list per output row (as ``write_list_local``/``_global``)."""
    target.write(part, {"out_id": dense_out_ids(part, len(lists)), **split_lists(lists)})


def _write_local(target: TableSink, part: int, in_pos: Any) -> None:
    write_first_rest(target, part, in_pos)


def _write_global(target: TableSink, part: int, in_ids: Any) -> None:
    write_first_rest(target, part, in_ids)


@dataclass
class FirstRestLocal(ListLocal):
    """``list_local``'s rows (the map-side combiner) as a first position and the rest."""

    name: ClassVar[str] = "first_rest_local"
    columns: ClassVar[tuple[str, ...]] = ("out_id", *HEAD_COLUMNS)

    write = staticmethod(_write_local)

    def id_columns(self, nparents: int) -> list[str]:
        return list(HEAD_COLUMNS)

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [lift(part, BitMap(uint32_values(all_items(table.column("first"), table.column("rest")))))]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        import pyarrow as pa

        lists = joined_lists(table.column("first"), table.column("rest"))
        return [pa.ListArray.from_arrays(lists.offsets, lifted(part, lists.values))]

    def count_inputs(self, table: Any, part: int, nparents: int) -> tuple[list[Any], int | None]:
        # a row's inputs are its first position and its rest: counted apart, never joined
        return [[lists_of_one(table.column("first")), _array(table.column("rest"))]], part

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        return table_rows_meeting(store, path, BitMap.deserialize(ids).to_array(), "uint32")


@dataclass
class FirstRestGlobal(ListGlobal):
    """``list_global``'s rows (a reducer's combiner ids, a group's ids) as a first id and the rest."""

    name: ClassVar[str] = "first_rest_global"
    columns: ClassVar[tuple[str, ...]] = ("out_id", *HEAD_COLUMNS)

    write = staticmethod(_write_global)

    def id_columns(self, nparents: int) -> list[str]:
        return list(HEAD_COLUMNS)

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [BitMap64(all_items(table.column("first"), table.column("rest")).to_numpy())]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [joined_lists(table.column("first"), table.column("rest"))]

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        return table_rows_meeting(store, path, BitMap64.deserialize(ids).to_array(), "int64")
