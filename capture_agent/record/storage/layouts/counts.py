"""Task side of deletion propagation: per row of one association table, how many of its inputs
are deleted, how many it has, and whether any of them changed, per parent slot.

A layout gives each row's input ids per slot as Arrow lists (``Layout.row_inputs``); the counts
are computed per table in Arrow and numpy (membership with ``is_in``, or a bool array for a
partition's positions; then the members counted by the list their position falls in), never a
Python object per input. Only the rows that meet the deletion come back (all rows with
``keep_all``: the one-result layouts, whose counts add up over partitions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyroaring import BitMap, BitMap64

from capture_agent.record.storage.ids import SHIFT, in_partition, lift


@dataclass
class RowCounts:
    """Counts of some rows of one table (plain lists, so they pickle small out of a task)."""

    out_ids: list[int]
    lost: list[list[int]]  # per slot, per row: inputs deleted
    total: list[list[int]]  # per slot, per row: inputs
    changed: list[bool]  # per row: an input survives with another value


def id_array(ids: BitMap64) -> Any:
    """A bitmap's ids as a pyarrow int64 array, without a Python int per id."""
    import numpy as np
    import pyarrow as pa

    return pa.array(np.frombuffer(ids.to_array(), dtype=np.uint64).view(np.int64), pa.int64())


DENSE_POSITIONS = 1 << 27  # membership of positions below this (a 128 MB split's byte offsets) is a bool array lookup


def _members(flat: Any, ids: BitMap64, part: int | None) -> Any:
    """Positions in ``flat`` (ascending, as a numpy array) of the items in ``ids``: global ids
    (``part`` None) found by ``is_in``; positions of partition ``part`` (uint32), by a lookup in a
    bool array as long as the largest wanted position (what is past it is not wanted)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if part is None:
        value_set = id_array(ids)
    else:
        wanted = np.frombuffer(in_partition(ids, part).to_array(), dtype=np.uint64) - np.uint64(part << SHIFT)
        if not len(wanted):
            return np.zeros(0, np.int64)
        if not flat.null_count and int(wanted[-1]) < DENSE_POSITIONS:
            lookup = np.zeros(int(wanted[-1]) + 2, bool)
            lookup[wanted] = True
            return np.flatnonzero(np.take(lookup, flat.to_numpy(), mode="clip"))
        value_set = pa.array(wanted.astype(np.uint32))
    if flat.type != value_set.type:
        value_set = value_set.cast(flat.type, safe=False)
    return pc.indices_nonzero(pc.fill_null(pc.is_in(flat, value_set=value_set), False)).to_numpy()


def _per_row(at: Any, offsets: Any, n: int) -> Any:
    """Per list (``offsets``, from 0), how many of the item positions ``at`` (ascending) it holds."""
    import numpy as np

    if not len(at):
        return np.zeros(n, np.int64)
    return np.bincount(np.searchsorted(offsets, at, side="right") - 1, minlength=n)


def _piece_counts(lists: Any, lost: BitMap64, changed: BitMap64, part: int | None) -> tuple[Any, Any, Any]:
    """Per row of one ListArray: its inputs, of them deleted, of them changed."""
    import numpy as np
    import pyarrow.compute as pc

    n = len(lists)
    offsets = lists.offsets.to_numpy().astype(np.int64)
    start = int(offsets[0])
    offsets -= start
    flat = lists.values.slice(start, int(offsets[-1]))
    total = np.diff(offsets)
    if flat.null_count:
        total = total - _per_row(pc.indices_nonzero(pc.is_null(flat)).to_numpy(), offsets, n)
    counted = [_per_row(_members(flat, ids, part), offsets, n) if ids and len(flat) else np.zeros(n, np.int64)
               for ids in (lost, changed)]
    return total, counted[0], counted[1]


def row_counts(out_ids: Any, per_slot: list[Any], lost: list[BitMap64], changed: list[BitMap64],
               keep_all: bool = False, part: int | None = None) -> RowCounts:
    """The counts of the rows whose inputs meet ``lost`` or ``changed`` (ids per slot).

    ``per_slot``: per slot, a ListArray of input ids, a list per row (nulls: no input), or a
    list of such ListArrays whose lists together are each row's inputs (``Layout.count_inputs``):
    global int64 ids, or with ``part``, uint32 positions of that partition."""
    import numpy as np

    n = len(out_ids)
    hit = np.full(n, keep_all)
    moved = np.zeros(n, bool)
    lost_counts, totals = [], []
    for slot, pieces in enumerate(per_slot):
        total, gone, other = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
        for lists in pieces if isinstance(pieces, list) else [pieces]:
            counted = _piece_counts(lists, lost[slot], changed[slot], part)
            total, gone, other = total + counted[0], gone + counted[1], other + counted[2]
        lost_counts.append(gone)
        totals.append(total)
        hit |= (gone > 0) | (other > 0)
        moved |= other > 0
    rows = np.flatnonzero(hit)
    return RowCounts(out_ids.to_numpy(zero_copy_only=False)[rows].tolist(), [c[rows].tolist() for c in lost_counts],
                     [t[rows].tolist() for t in totals], moved[rows].tolist())


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
