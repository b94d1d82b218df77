"""Task side of deletion propagation: per row of one association table, how many of its inputs
are deleted, how many it has, and whether any of them changed, per parent slot.

A layout gives each row's input ids per slot as Arrow lists (``Layout.row_inputs``); the counts
are computed per table in Arrow (membership with ``is_in``, per-row sums from a cumulative sum
at the list offsets), never a Python object per input. Only the rows that meet the deletion come
back (all rows with ``keep_all``: the one-result layouts, whose counts add up over partitions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyroaring import BitMap, BitMap64

from capture_agent.record.storage.ids import SHIFT, lift


@dataclass
class RowCounts:
    """Counts of some rows of one table (plain lists, so they pickle small out of a task)."""

    out_ids: list[int]
    lost: list[list[int]]  # per slot, per row: inputs deleted
    total: list[list[int]]  # per slot, per row: inputs
    changed: list[bool]  # per row: an input survives with another value


def _per_row(mask: Any, offsets: Any) -> Any:
    """Per list (``offsets``, from 0), how many of its items ``mask`` holds."""
    import pyarrow as pa
    import pyarrow.compute as pc

    running = pa.concat_arrays([pa.array([0], pa.int64()),
                                pc.cumulative_sum(pc.cast(mask, pa.int64()))])
    return pc.subtract(pc.take(running, offsets[1:]), pc.take(running, offsets[:-1]))


def _members(values: Any, ids: BitMap64) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if not ids:
        return pa.repeat(pa.scalar(False), len(values))
    return pc.fill_null(pc.is_in(values, value_set=pa.array(list(ids), pa.int64())), False)


def row_counts(out_ids: Any, per_slot: list[Any], lost: list[BitMap64], changed: list[BitMap64],
               keep_all: bool = False) -> RowCounts:
    """The counts of the rows whose inputs meet ``lost`` or ``changed`` (ids per slot).

    ``per_slot``: one ListArray of int64 input ids per slot, a list per row (nulls: no input)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(out_ids)
    hit = pa.repeat(pa.scalar(keep_all), n)
    moved = pa.repeat(pa.scalar(False), n)
    lost_counts, totals = [], []
    for slot, lists in enumerate(per_slot):
        offsets = pc.subtract(pc.cast(lists.offsets, pa.int64()), lists.offsets[0].as_py())
        flat = lists.flatten()
        gone = _per_row(_members(flat, lost[slot]), offsets)
        other = _per_row(_members(flat, changed[slot]), offsets)
        total = _per_row(pc.is_valid(flat), offsets)
        lost_counts.append(gone)
        totals.append(total)
        hit = pc.or_(hit, pc.or_(pc.greater(gone, 0), pc.greater(other, 0)))
        moved = pc.or_(moved, pc.greater(other, 0))
    rows = pc.indices_nonzero(hit)
    return RowCounts(pc.take(out_ids, rows).to_pylist(), [pc.take(c, rows).to_pylist() for c in lost_counts],
                     [pc.take(t, rows).to_pylist() for t in totals], pc.take(moved, rows).to_pylist())


def lists_of_one(values: Any) -> Any:
    """Each value as a list of one (a null as an empty list)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = values.combine_chunks() if hasattr(values, "combine_chunks") else values
    valid = pc.cast(pc.is_valid(values), pa.int32())
    offsets = pa.concat_arrays([pa.array([0], pa.int32()), pc.cumulative_sum(valid)])
    return pa.ListArray.from_arrays(offsets, pc.drop_null(values))


def lifted(part: int, positions: Any) -> Any:
    """uint32 positions of partition ``part`` as global int64 ids."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.add(pc.cast(positions, pa.int64()), pa.scalar(part << SHIFT, pa.int64()))


def bitmap_lists(blobs: list[bytes | None], part: int | None) -> Any:
    """Serialized bitmaps (BitMap of positions of ``part``, or BitMap64 of ids when ``part`` is
    None) as a ListArray of int64 ids, one list per bitmap."""
    import pyarrow as pa

    lists: list[list[int]] = []
    for blob in blobs:
        if blob is None:
            lists.append([])
        elif part is None:
            lists.append(list(BitMap64.deserialize(blob)))
        else:
            lists.append(list(lift(part, BitMap.deserialize(blob))))
    return pa.array(lists, pa.list_(pa.int64()))
