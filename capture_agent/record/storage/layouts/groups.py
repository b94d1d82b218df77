"""The map side of a captured DataFrame aggregate: ``frame_groups``.

| layout | columns | meaning | deletion |
|---|---|---|---|
| frame_groups | out_id (int64: a group), in_ids_0..n (list<int64>, or BitMap64) | ids per parent, one task | + |

A DataFrame aggregate's records are its groups, named by a 63-bit hash of the group's columns
(which the aggregate also groups by, so its output rows carry it). Each map task writes one table
(``java/lineage/sql/TapTable.java``, for the tap ``Tap.java``): a row per group the task saw,
sorted by group. A group's inputs are the union over every table, so a step reads them all (each
skipping the row groups that cannot hold the wanted groups), and deletion counts add up per group
over the tables. A task whose groups are large (1024 rows or more on average) writes each group's
ids as a serialized BitMap64 (binary) rather than a list: reading either gives the same ids.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from pyroaring import BitMap64

from capture_agent.record.storage.deletion import DeletionRule, Sum
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.ids import union_all
from capture_agent.record.storage.layouts.base import (
    CapturePoint,
    Layout,
    StepContext,
    list_rows_meeting,
    per_parent,
    set_rows_meeting,
)
from capture_agent.record.storage.layouts.counts import RowCounts, bitmap_lists, row_counts
from capture_agent.record.storage.tables import parquet_file


def _int64s(ids: BitMap64) -> Any:
    import pyarrow as pa

    return pa.array(list(ids), pa.int64())


def _rows_of(store: StoreFS, path: str, columns: list[str], groups: bytes | None) -> Any:
    """The rows of one table whose group is in ``groups`` (serialized BitMap64; None: all rows)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    pf = parquet_file(store, path)
    if groups is None:
        return pf.read(columns=["out_id", *columns])
    wanted = BitMap64.deserialize(groups)
    low, high = wanted.min(), wanted.max()
    meta = pf.metadata
    keep = []
    for g in range(meta.num_row_groups):  # rows are sorted by group: skip the row groups that cannot hold them
        stats = meta.row_group(g).column(0).statistics
        if stats is None or not stats.has_min_max or (stats.max >= low and stats.min <= high):
            keep.append(g)
    table = pf.read_row_groups(keep, columns=["out_id", *columns]) if keep else None
    if table is None:
        return pa.table({"out_id": pa.array([], pa.int64()), **{c: pa.array([], pa.list_(pa.int64()))
                                                              for c in columns}})
    return table.filter(pc.is_in(table.column("out_id"), value_set=_int64s(wanted)))


def _sets(column: Any) -> bool:
    """Whether a table's ids column holds bitmaps (else lists)."""
    import pyarrow as pa

    return bool(pa.types.is_binary(column.type))


def _ids(column: Any) -> BitMap64:
    import pyarrow.compute as pc

    if not len(column):
        return BitMap64()
    if _sets(column):
        return union_all(BitMap64.deserialize(b) for b in column.to_pylist() if b is not None)
    return BitMap64(pc.list_flatten(column.combine_chunks()).to_numpy())


def _lists(column: Any) -> Any:
    """The column's ids as a ListArray of int64 (a list per group)."""
    return bitmap_lists(column.to_pylist(), None) if _sets(column) else column.combine_chunks()


@dataclass
class FrameGroups(Layout):
    """One table per map task of a DataFrame aggregate: group <- ids per source (see the module docstring)."""

    name: ClassVar[str] = "frame_groups"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "in_ids_0", "in_ids_1")  # in_ids_N: one per parent

    def deletion(self, kind: str) -> DeletionRule:
        return Sum()

    def slots(self, nparents: int) -> int:
        return nparents

    def id_columns(self, nparents: int) -> list[str]:
        return [f"in_ids_{i}" for i in range(nparents)]

    def row_inputs(self, table: Any, part: int, nparents: int) -> list[Any]:
        return [_lists(table.column(f"in_ids_{i}")) for i in range(nparents)]

    def _tables(self, store: StoreFS, point: CapturePoint) -> list[str]:
        return [point.table_path(p) for p in sorted(point.partition_rows(store))]

    # ------------------------------------------------------------------ records
    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        out = BitMap64()
        for path in self._tables(store, point):
            column = parquet_file(store, path).read(columns=["out_id"]).column("out_id")
            out |= BitMap64(column.to_numpy())
        return out

    # ------------------------------------------------------------------ steps
    def backward(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> dict[str, BitMap64]:
        tables = self._tables(ctx.fs, point)
        blob = bytes(ids.serialize())
        units = [(ctx.fs, path, blob, len(point.parents)) for path in tables]
        return per_parent(point, ctx.run_units(self.backward_groups, units, sum(ctx.fs.size(p) for p in tables)))

    def backward_groups(self, store: StoreFS, path: str, groups: bytes, nparents: int) -> list[bytes]:
        """Task side: per parent slot, the ids of the wanted groups' rows of one table."""
        table = _rows_of(store, path, self.id_columns(nparents), groups)
        return [bytes(_ids(table.column(c)).serialize()) for c in self.id_columns(nparents)]

    def forward(self, ctx: StepContext, child: CapturePoint, parent_id: str, ids: BitMap64) -> BitMap64:
        slots = [i for i, p in enumerate(child.parents) if p == parent_id]
        tables = self._tables(ctx.fs, child)
        blob = bytes(ids.serialize())
        units = [(ctx.fs, path, slot, blob) for path in tables for slot in slots]
        outputs = ctx.run_units(self.forward_groups, units, sum(ctx.fs.size(p) for p in tables) * len(slots))
        return union_all(BitMap64.deserialize(b) for b in outputs)

    def forward_groups(self, store: StoreFS, path: str, slot: int, ids: bytes) -> bytes:
        """Task side: the groups of one table whose inputs at ``slot`` meet ``ids``."""
        import pyarrow as pa

        name = f"in_ids_{slot}"
        table = parquet_file(store, path).read(columns=["out_id", name])
        column = table.column(name)
        if _sets(column):
            rows = set_rows_meeting(column.to_pylist(), ids)
        else:
            rows = list_rows_meeting(column, pa.array(list(BitMap64.deserialize(ids)), pa.int64()))
        if not rows:
            return bytes(BitMap64().serialize())
        out_ids = table.column("out_id").combine_chunks()
        groups = BitMap64(out_ids.take(pa.array(rows, pa.int64())).to_numpy())
        return bytes(self.reached(groups, out_ids).serialize())

    def reached(self, groups: BitMap64, out_ids: Any) -> BitMap64:
        """Task side: the rows of one table a forward step gives for the groups whose inputs meet
        the ids (``out_ids``: the table's, an Arrow array): those groups."""
        return groups

    def rows_using(self, store: StoreFS, path: str, slot: int, ids: bytes) -> list[int]:
        raise NotImplementedError("frame_groups: forward steps read groups, not rows")

    # ------------------------------------------------------------------ deletion propagation
    def counts(self, ctx: StepContext, point: CapturePoint, lost: list[BitMap64],
               changed: list[BitMap64]) -> list[RowCounts]:
        """Counts of the groups whose inputs meet the deletion, over every table (a group's rows
        in each map task's table add up): first the groups hit, then their rows in every table."""
        hit = self.hit(ctx, point, lost, changed)
        return self.counts_of(ctx, point, hit, lost, changed) if hit else []

    def hit(self, ctx: StepContext, point: CapturePoint, lost: list[BitMap64], changed: list[BitMap64]) -> BitMap64:
        """The groups whose inputs meet the deletion (``forward`` from each parent's deleted and changed)."""
        out = BitMap64()
        for parent_id in dict.fromkeys(point.parents):
            slot = point.parents.index(parent_id)
            out |= self.forward(ctx, point, parent_id, lost[slot] | changed[slot])
        return out

    def counts_of(self, ctx: StepContext, point: CapturePoint, groups: BitMap64, lost: list[BitMap64],
                  changed: list[BitMap64]) -> list[RowCounts]:
        """The counts of ``groups``' rows, a list per table."""
        nslots = len(point.parents)
        tables = self._tables(ctx.fs, point)
        blobs = ([bytes(b.serialize()) for b in lost[:nslots]], [bytes(b.serialize()) for b in changed[:nslots]])
        units = [(ctx.fs, path, bytes(groups.serialize()), nslots, *blobs) for path in tables]
        return ctx.run_units(self.counts_groups, units, sum(ctx.fs.size(p) for p in tables))

    def counts_groups(self, store: StoreFS, path: str, groups: bytes, nparents: int, lost: list[bytes],
                      changed: list[bytes]) -> RowCounts:
        table = _rows_of(store, path, self.id_columns(nparents), groups)
        return row_counts(table.column("out_id").combine_chunks(), self.row_inputs(table, 0, nparents),
                          [BitMap64.deserialize(b) for b in lost], [BitMap64.deserialize(b) for b in changed],
                          keep_all=True)
