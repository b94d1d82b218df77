"""Layouts after a shuffle: inputs are 64-bit ids from any partition of the parents.

| layout | columns | meaning | modes (deletion rule) |
|---|---|---|---|
| one_global | out_id, in_id (int64) | one parent id | shuffles (copy); top (copy, limit); subtract (−) |
| list_global | out_id, in_ids (list<int64>) | combiner ids; a group's ids | combine, group (+); distinct (δ) |
| set_global | out_id, in_ids (BitMap64) | a group's input ids (older runs) | group (+) |
| sets | out_id, in_ids_0..n (BitMap64) | one set per parent | cogroup (+); intersection (δ·δ); DataFrame (+ or ·) |
| frame_write | as sets | a DataFrame write: row i of partition p is row i of p's part files | as sets |
| pair | out_id, left_id, right_id (nullable) | a pair's two inputs | join, cartesian (·); outer joins |
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pyroaring import BitMap64

from capture_agent.record.storage.deletion import (
    Copy,
    DeletionRule,
    Difference,
    Exists,
    Intersection,
    Outer,
    Product,
    Sum,
)
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import SHIFT, split_by_partition, union_all
from capture_agent.record.storage.layouts.base import (
    CapturePoint,
    Layout,
    Position,
    Predicate,
    StepContext,
    dense_out_ids,
    filtered,
    i64_column,
    list_rows_meeting,
    set_rows_meeting,
    write_sets,
)
from capture_agent.record.storage.layouts.counts import bitmap_lists, lists_of_one
from capture_agent.record.storage.layouts.inputs import check_files, parquet_rows_at
from capture_agent.record.storage.tables import TableSink, read_rows


def _rows_in(column: Any, ids: bytes) -> list[int]:
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = pa.array(list(BitMap64.deserialize(ids)), pa.int64())
    return list(pc.indices_nonzero(pc.fill_null(pc.is_in(column, value_set=wanted), False)).to_pylist())


def write_one_global(target: TableSink, part: int, ids: array) -> None:
    target.write(part, {"out_id": dense_out_ids(part, len(ids)), "in_id": i64_column(ids)})


@dataclass
class OneGlobal(Layout):
    """Row i <- one id of the parent (after partitionBy, sortByKey, repartition; top; subtract)."""

    name: ClassVar[str] = "one_global"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_id")

    num: int = -1  # top/takeOrdered: how many were taken

    write = staticmethod(write_one_global)

    def deletion(self, kind: str) -> DeletionRule:
        if self.mode in ("subtract", "subtract_by_key"):
            return Difference()
        return Copy(appears=self.num >= 0)

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [BitMap64(table.column("in_id").to_pylist())]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [lists_of_one(table.column("in_id"))]

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        return _rows_in(read_rows(store, path, ["in_id"]).column("in_id"), ids)


def write_list_global(target: TableSink, part: int, in_ids: Any) -> None:
    """``in_ids``: a pyarrow ListArray of int64 ids, one list per output row."""
    target.write(part, {"out_id": dense_out_ids(part, len(in_ids)), "in_ids": in_ids})


@dataclass
class ListGlobal(Layout):
    """Row i <- the combiner ids merged into it (reduceByKey and friends, countByValue), or the
    ids of the records grouped under its key (groupByKey)."""

    name: ClassVar[str] = "list_global"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_ids")
    id_sets: ClassVar[bool] = True

    write = staticmethod(write_list_global)

    def deletion(self, kind: str) -> DeletionRule:
        return Exists() if self.mode == "distinct" else Sum()

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        import pyarrow.compute as pc

        return [BitMap64(pc.list_flatten(table.column("in_ids")).to_pylist())]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [table.column("in_ids").combine_chunks()]

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        import pyarrow as pa

        column = read_rows(store, path, ["in_ids"]).column("in_ids")
        return list_rows_meeting(column, pa.array(list(BitMap64.deserialize(ids)), pa.int64()))


@dataclass
class SetGlobal(Layout):
    """Row i <- a set of parent ids (groupByKey in stores written before it took ``list_global``:
    a Roaring bitmap per key cost more to build than the list, which delta encoding keeps as
    small; kept so those stores still read)."""

    name: ClassVar[str] = "set_global"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_ids")
    id_sets: ClassVar[bool] = True

    write = staticmethod(write_sets)

    def deletion(self, kind: str) -> DeletionRule:
        return Sum()

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [union_all(BitMap64.deserialize(b) for b in table.column("in_ids").to_pylist())]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [bitmap_lists(table.column("in_ids").to_pylist(), None)]

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        return set_rows_meeting(read_rows(store, path, ["in_ids"]).column("in_ids").to_pylist(), ids)


def write_sets_per_parent(target: TableSink, part: int, per_side: list[list[bytes]]) -> None:
    import pyarrow as pa

    columns: dict[str, Any] = {"out_id": dense_out_ids(part, len(per_side[0]) if per_side else 0)}
    for side, sets in enumerate(per_side):
        columns[f"in_ids_{side}"] = pa.array(sets, type=pa.binary())
    target.write(part, columns)


@dataclass
class Sets(Layout):
    """Row i <- one set of ids per parent (cogroup, groupWith, intersection)."""

    name: ClassVar[str] = "sets"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_ids_0", "in_ids_1")  # in_ids_N: one per parent
    id_sets: ClassVar[bool] = True

    keys: list[str] | None = None  # a DataFrame aggregate's group columns, [] when global (what-ifs pair by them)

    write = staticmethod(write_sets_per_parent)

    def deletion(self, kind: str) -> DeletionRule:
        if self.mode == "product":  # a DataFrame output without aggregates: one id per source read
            return Product()
        return Intersection() if self.mode == "intersection" else Sum()

    def slots(self, nparents: int) -> int:
        return nparents

    def id_columns(self, nparents: int) -> list[str]:
        return [f"in_ids_{i}" for i in range(nparents)]

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [union_all(BitMap64.deserialize(b) for b in table.column(f"in_ids_{slot}").to_pylist())
                for slot in range(nparents)]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [bitmap_lists(table.column(f"in_ids_{slot}").to_pylist(), None) for slot in range(nparents)]

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        name = f"in_ids_{slot}"
        return set_rows_meeting(read_rows(store, path, [name]).column(name).to_pylist(), ids)


@dataclass
class FrameWrite(Sets):
    """A captured DataFrame's write: ``sets`` rows, and where they went. Record (p, i) is row i of
    partition p, which Spark wrote to the part files ``part-<p>-...`` (``c000``, ``c001``... when
    ``maxRecordsPerFile`` splits them). ``files`` lists the Parquet part files this write made, each
    {path, size, mtime, part, row_start, rows}; a captured read of them chains here
    (``layouts.inputs.FileRows.backward``). Other formats keep only ``path``."""

    name: ClassVar[str] = "frame_write"

    path: str = ""  # the folder written, qualified (file:/..., s3://...)
    format: str = ""
    files: list[dict[str, Any]] = field(default_factory=list)

    def _located(self, ids: BitMap64) -> dict[str, list[tuple[int, int]]]:
        """Part file -> (record id, row in the file) of the records ``ids``."""
        by_part: dict[int, list[dict[str, Any]]] = {}
        for f in self.files:
            by_part.setdefault(f["part"], []).append(f)
        out: dict[str, list[tuple[int, int]]] = {}
        for part, positions in split_by_partition(ids):
            for i in positions:
                for f in by_part.get(part, ()):
                    if f["row_start"] <= i < f["row_start"] + f["rows"]:
                        out.setdefault(f["path"], []).append(((part << SHIFT) | i, i - f["row_start"]))
                        break
        return out

    def values(self, ctx: StepContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        """The written rows, read back from the part files (None when the write listed none)."""
        if not self.files:
            return None
        check_files(self.files)
        out: list[tuple[int, Any]] = []
        for uri, located in self._located(ids).items():
            rows = parquet_rows_at(uri, [row for _, row in located])
            out.extend((record_id, row) for (record_id, _), row in zip(located, rows, strict=True))
        out.sort(key=lambda t: t[0])
        return filtered(out, predicate)

    def positions(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> list[Position] | None:
        if not self.files:
            return None
        located = sorted((record_id, Position(uri, row)) for uri, pairs in self._located(ids).items()
                         for record_id, row in pairs)
        return [position for _, position in located]


def write_pair(target: TableSink, part: int, lefts: list[int | None], rights: list[int | None]) -> None:
    import pyarrow as pa

    target.write(part, {"out_id": dense_out_ids(part, len(lefts)), "left_id": pa.array(lefts, type=pa.int64()),
                        "right_id": pa.array(rights, type=pa.int64())})


@dataclass
class Pair(Layout):
    """Row i <- (left id, right id), either None for an outer join's missing side (joins, cartesian)."""

    name: ClassVar[str] = "pair"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "left_id", "right_id")

    write = staticmethod(write_pair)

    def deletion(self, kind: str) -> DeletionRule:
        kept = {"left": (0,), "right": (1,), "full": ()}.get(self.mode)
        return Product() if kept is None else Outer(kept=kept)

    def slots(self, nparents: int) -> int:
        return nparents

    def id_columns(self, nparents: int) -> list[str]:
        return ["left_id", "right_id"]

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [BitMap64([x for x in table.column(name).to_pylist() if x is not None])
                for name in ("left_id", "right_id")]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [lists_of_one(table.column(name)) for name in ("left_id", "right_id")]

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        name = ("left_id", "right_id")[slot]
        return _rows_in(read_rows(store, path, [name]).column(name), ids)
