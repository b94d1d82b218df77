"""Record identifiers: 64-bit ints, partition in the high 32 bits, position in the low 32 bits.

The position is what the capture point says it is: the byte offset of a line relative to the start
of its input split for text, the row number within the partition for most other points, the byte
offset in the part file for ``saveAsTextFile`` outputs.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import Any

from pyroaring import BitMap, BitMap64

SHIFT = 32
LOW_MASK = (1 << SHIFT) - 1


def make_id(partition: int, position: int) -> int:
    return (partition << SHIFT) | position


def partition_of(record_id: int) -> int:
    return record_id >> SHIFT


def position_of(record_id: int) -> int:
    return record_id & LOW_MASK


def id_array(ids: BitMap64) -> Any:
    """``ids`` as an Arrow int64 array, in order (copied from the bitmap's own array)."""
    import pyarrow as pa

    values = ids.to_array()
    return pa.Array.from_buffers(pa.uint64(), len(values), [None, pa.py_buffer(values)]).cast(pa.int64())


def as_bitmap(ids: Iterable[int] | BitMap64 | None) -> BitMap64:
    if isinstance(ids, BitMap64):
        return ids
    result = BitMap64(list(ids or ()))
    result.run_optimize()
    return result


def lift(partition: int, positions: BitMap) -> BitMap64:
    """The 64-bit ids (partition, p) for p in a 32-bit bitmap, without visiting each one
    (roaring's portable 64-bit format is a list of (high 32 bits, 32-bit bitmap) buckets)."""
    if not positions:
        return BitMap64()
    return BitMap64.deserialize(struct.pack("<QI", 1, partition) + positions.serialize())


def split_by_partition(ids: BitMap64) -> Iterator[tuple[int, BitMap]]:
    """Yields (partition, 32-bit bitmap of positions) for every partition that holds ids.

    Each partition's ids are cut out with a range spanning only its first to last id (found by
    rank): a range over the whole 2^32 positions would cost 65,536 containers per partition."""
    count = len(ids)
    start = 0
    while start < count:
        first = ids[start]
        part = first >> SHIFT
        end = ids.rank(((part + 1) << SHIFT) - 1)
        yield part, BitMap.deserialize(_cut(ids, start, end).serialize()[12:])
        start = end


def _cut(ids: BitMap64, start: int, end: int) -> BitMap64:
    """The ids of ranks ``start`` to ``end`` (excluded): a range from the first to the last of them."""
    window = BitMap64()
    window.add_range(ids[start], ids[end - 1] + 1)
    return window & ids


def in_partition(ids: BitMap64, part: int) -> BitMap64:
    """The ids of partition ``part`` (cut, as ``split_by_partition`` cuts, from its first to its last id)."""
    start = ids.rank((part << SHIFT) - 1) if part else 0
    end = ids.rank(((part + 1) << SHIFT) - 1)
    return _cut(ids, start, end) if start < end else BitMap64()


def partitions_of(ids: BitMap64) -> list[int]:
    """Sorted distinct partitions of the ids."""
    return [part for part, _ in split_by_partition(ids)]


def union_all(bitmaps: Iterable[BitMap64]) -> BitMap64:
    result = BitMap64()
    for bm in bitmaps:
        result |= bm
    return result
