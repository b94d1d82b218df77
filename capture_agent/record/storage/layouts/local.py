"""Partition-local layouts: every input of a row is in the same partition of the (one) parent.

| layout | columns | meaning |
|---|---|---|
| one_local | out_id, in_id (uint32) | in id = (same partition, in_id) at the parent |
| list_local | out_id, in_pos (list<uint32>) | in ids = (same partition, each) at the parent |
| set_local | out_id, in_ids (BitMap) | in ids = (same partition, each) at the parent |
| single | out_id (0), in_ids (BitMap) | one result record <- every listed record of every partition |
| set_partition | out_count, in_ids (BitMap) | every output of the partition <- all of in_ids |
| save | out_id, in_id (uint32) | saveAsTextFile; out_id = (part file, byte offset of the line) |
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any, ClassVar

from pyroaring import BitMap, BitMap64

from capture_agent.record.storage.deletion import Copy, DeletionRule, Exists, Sum
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import SHIFT, lift, split_by_partition
from capture_agent.record.storage.layouts.base import (
    CapturePoint,
    Layout,
    Position,
    Predicate,
    Unit,
    ValueContext,
    bitmap_bytes,
    dense_out_ids,
    filtered,
    i64_column,
    list_rows_meeting,
    require,
    serialize_all,
    u32_column,
    uint32_values,
    write_sets,
)
from capture_agent.record.storage.layouts.counts import RowCounts, bitmap_lists, lifted, lists_of_one, row_counts
from capture_agent.record.storage.sources import read_lines
from capture_agent.record.storage.tables import TableSink, TableTarget, read_rows


def write_one_local(target: TableSink, part: int, positions: array) -> None:
    target.write(part, {"out_id": dense_out_ids(part, len(positions)), "in_id": u32_column(positions)})


@dataclass
class OneLocal(Layout):
    """Row i of partition p <- position in_id of partition p at the parent (stage, collect, take)."""

    name: ClassVar[str] = "one_local"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_id")
    local: ClassVar[bool] = True

    limit: int = -1  # take(n): a deletion lets later records in

    write = staticmethod(write_one_local)

    def deletion(self, kind: str) -> DeletionRule:
        return Copy(appears=self.limit >= 0)

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [lift(part, BitMap(table.column("in_id").to_pylist()))]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [lists_of_one(lifted(part, table.column("in_id").combine_chunks()))]

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        import pyarrow as pa
        import pyarrow.compute as pc

        column = read_rows(store, path, ["in_id"]).column("in_id")
        mask = pc.is_in(column, value_set=pa.array(list(BitMap.deserialize(ids)), pa.uint32()))
        return list(pc.indices_nonzero(mask).to_pylist())


def write_list_local(target: TableSink, part: int, in_pos: Any) -> None:
    """``in_pos``: a pyarrow ListArray of uint32 positions, one list per output row."""
    target.write(part, {"out_id": dense_out_ids(part, len(in_pos)), "in_pos": in_pos})


@dataclass
class ListLocal(Layout):
    """Row i <- a sorted list of positions of the same partition (the map-side combiner).

    Built in C++ from one flat array of positions grouped by key: no object per key, so millions
    of keys with a record or two each cost what their positions cost (delta-encoded)."""

    name: ClassVar[str] = "list_local"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_pos")
    local: ClassVar[bool] = True
    id_sets: ClassVar[bool] = True

    write = staticmethod(write_list_local)

    def deletion(self, kind: str) -> DeletionRule:
        return Exists() if self.mode == "distinct" else Sum()

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        import pyarrow.compute as pc

        return [lift(part, BitMap(uint32_values(pc.list_flatten(table.column("in_pos")))))]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        import pyarrow as pa

        lists = table.column("in_pos").combine_chunks()
        return [pa.ListArray.from_arrays(lists.offsets, lifted(part, lists.values))]

    def count_inputs(self, table: Any, part: int, nparents: int) -> tuple[list[Any], int | None]:
        return [table.column("in_pos").combine_chunks()], part

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        import pyarrow as pa

        column = read_rows(store, path, ["in_pos"]).column("in_pos")
        return list_rows_meeting(column, pa.array(list(BitMap.deserialize(ids)), pa.uint32()))


@dataclass
class SetLocal(Layout):
    """Row i <- a set of positions of the same partition (map-side combiner, mapPartitions)."""

    name: ClassVar[str] = "set_local"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_ids")
    local: ClassVar[bool] = True
    id_sets: ClassVar[bool] = True

    write = staticmethod(write_sets)

    def deletion(self, kind: str) -> DeletionRule:
        return Sum()

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        local = BitMap()
        for blob in table.column("in_ids").to_pylist():
            local |= BitMap.deserialize(blob)
        return [lift(part, local)]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [bitmap_lists(table.column("in_ids").to_pylist(), part)]

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        local = BitMap.deserialize(ids)
        blobs = read_rows(store, path, ["in_ids"]).column("in_ids").to_pylist()
        return [i for i, blob in enumerate(blobs) if BitMap.deserialize(blob).intersect(local)]


def write_single_result(target: TableTarget, part: int, positions: array) -> None:
    import pyarrow as pa

    target.write(part, {"out_id": pa.array([0], type=pa.int64()),
                        "in_ids": pa.array([bitmap_bytes(positions)], type=pa.binary())})


@dataclass
class Single(SetLocal):
    """One result record (id 0) from every record of every partition: count, reduce, sum, foreach."""

    name: ClassVar[str] = "single"
    keep_all_rows: ClassVar[bool] = True

    write_single = staticmethod(write_single_result)

    def backward_parts(self, point: CapturePoint, ids: BitMap64) -> list[tuple[int, bytes | None]]:
        return [(p, None) for p in range(point.num_partitions)]

    def forward_table(self, store: StoreFS, path: str, part: int, slot: int, ids: bytes) -> bytes:
        if not store.exists(path) or not self.rows_using(store, path, slot, ids):
            return bytes(BitMap64().serialize())
        return bytes(BitMap64([0]).serialize())

    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        return BitMap64([0])


def write_set_partition(target: TableTarget, part: int, count: int, positions: array) -> None:
    import pyarrow as pa

    target.write(part, {"out_count": pa.array([count], type=pa.int64()),
                        "in_ids": pa.array([bitmap_bytes(positions)], type=pa.binary())})


@dataclass
class SetPartition(Layout):
    """Every output of a partition <- every input it pulled (mapPartitions(lineage="partition"), pipe)."""

    name: ClassVar[str] = "set_partition"
    columns: ClassVar[tuple[str, ...]] = ("out_count", "in_ids")
    local: ClassVar[bool] = True
    id_sets: ClassVar[bool] = True

    write = staticmethod(write_set_partition)

    def deletion(self, kind: str) -> DeletionRule:
        return Sum()

    def backward_parts(self, point: CapturePoint, ids: BitMap64) -> list[tuple[int, bytes | None]]:
        return [(p, None) for p, _ in split_by_partition(ids)]

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [lift(part, BitMap.deserialize(table.column("in_ids")[0].as_py()))]

    def counts_table(self, store: StoreFS, path: str, part: int, nparents: int, lost: list[bytes],
                     changed: list[bytes]) -> RowCounts | None:
        """Every output of the partition has the partition's inputs: one row's counts, repeated."""
        import pyarrow as pa

        if not store.exists(path):
            return None
        table = read_rows(store, path, ["out_count", "in_ids"])
        one = row_counts(pa.array([0], pa.int64()), [bitmap_lists(table.column("in_ids").to_pylist(), part)],
                         [BitMap64.deserialize(b) for b in lost], [BitMap64.deserialize(b) for b in changed])
        if not one.out_ids:
            return one
        n = table.column("out_count")[0].as_py()
        return RowCounts([(part << SHIFT) + i for i in range(n)], [c * n for c in one.lost], [t * n for t in one.total],
                         one.changed * n)

    def forward_table(self, store: StoreFS, path: str, part: int, slot: int, ids: bytes) -> bytes:
        out = BitMap64()
        if store.exists(path):
            table = read_rows(store, path, ["out_count", "in_ids"])
            if BitMap.deserialize(table.column("in_ids")[0].as_py()).intersect(BitMap.deserialize(ids)):
                out.add_range(part << SHIFT, (part << SHIFT) + table.column("out_count")[0].as_py())
        return bytes(out.serialize())

    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        out = BitMap64()
        for part in point.partition_rows(store):
            count = read_rows(store, point.table_path(part), ["out_count"]).column("out_count")[0].as_py()
            out.add_range(part << SHIFT, (part << SHIFT) + count)
        return out


def write_save(target: TableTarget, part: int, offsets: array, positions: array) -> None:
    hi = part << SHIFT
    out = array("q", [hi | o for o in offsets])
    target.write(part, {"out_id": i64_column(out), "in_id": u32_column(positions)})


@dataclass
class Save(Layout):
    """saveAsTextFile: out_id = (part file, byte offset of the line) <- a position at the parent."""

    name: ClassVar[str] = "save"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_id")
    local: ClassVar[bool] = True

    path: str = ""  # the output folder, qualified (file:/..., hdfs://...)

    write = staticmethod(write_save)

    def backward_parts(self, point: CapturePoint, ids: BitMap64) -> list[tuple[int, bytes | None]]:
        # rows are found by out_id (a byte offset), not by row number: the table is read whole
        return [(p, offsets.serialize()) for p, offsets in split_by_partition(ids)]

    def backward_cost(self, store: StoreFS, point: CapturePoint, units: list[Unit]) -> int:
        return sum(store.size(u[1]) for u in units)

    def backward_table(self, store: StoreFS, path: str, part: int, positions: bytes | None,
                       nparents: int) -> list[bytes]:
        import pyarrow as pa
        import pyarrow.compute as pc

        require(store, path)
        table = read_rows(store, path, ["out_id", "in_id"])
        if positions is not None:
            lows = pc.bit_wise_and(table.column("out_id"), pa.scalar((1 << SHIFT) - 1, pa.int64()))
            wanted = pa.array(list(BitMap.deserialize(positions)), pa.int64())
            table = table.filter(pc.is_in(lows, value_set=wanted))
        return serialize_all([lift(part, BitMap(table.column("in_id").to_pylist()))])

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [lists_of_one(lifted(part, table.column("in_id").combine_chunks()))]

    def forward_table(self, store: StoreFS, path: str, part: int, slot: int, ids: bytes) -> bytes:
        import pyarrow as pa
        import pyarrow.compute as pc

        if not store.exists(path):
            return bytes(BitMap64().serialize())
        table = read_rows(store, path, ["out_id", "in_id"])
        mask = pc.is_in(table.column("in_id"), value_set=pa.array(list(BitMap.deserialize(ids)), pa.uint32()))
        return bytes(BitMap64(table.column("out_id").filter(mask).to_pylist()).serialize())

    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        out = BitMap64()
        for part in point.partition_rows(store):
            out |= BitMap64(read_rows(store, point.table_path(part), ["out_id"]).column("out_id").to_pylist())
        return out

    def part_file(self, part: int) -> str:
        return f"{self.path.rstrip('/')}/part-{part:05d}"

    def values(self, ctx: ValueContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        out: list[tuple[int, Any]] = []
        for part, offsets in split_by_partition(ids):
            hi = part << SHIFT
            offs = list(offsets)
            out.extend((hi | o, line) for o, line in zip(offs, read_lines(self.part_file(part), offs), strict=True))
        return filtered(out, predicate)

    def positions(self, ctx: ValueContext, point: CapturePoint, ids: BitMap64) -> list[Position] | None:
        return [Position(self.part_file(record_id >> SHIFT), record_id & ((1 << SHIFT) - 1)) for record_id in ids]
