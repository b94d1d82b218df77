"""The ends of generated stage functions: what a fused stage does with each (position, record).

Called by the code ``capture/codegen.py`` generates; each writes its partition's table once, at
the end of the partition, through its layout's writer. Shipped to executors by value.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from typing import Any

from capture_agent.record.storage.ids import SHIFT
from capture_agent.record.storage.layouts.inputs import write_text_input
from capture_agent.record.storage.layouts.local import (
    write_list_local,
    write_one_local,
    write_save,
    write_single_result,
)
from capture_agent.record.storage.tables import TableTarget


class LimitReached(Exception):
    """Raised inside a stage function when take() has all the records it asked for."""


def finish_text_input(target: TableTarget, part: int, offsets: array, complete: bool, base: int = 0) -> None:
    write_text_input(target, part, offsets, complete, base)


def finish_one_local(target: TableTarget, part: int, positions: array) -> None:
    """Output/stage table: out_id = (part, i) -> in_id = position i of the stage's input."""
    write_one_local(target, part, positions)


def finish_single(target: TableTarget, part: int, positions: array) -> None:
    """Aggregate output (count, reduce, sum...): the one result record <- every record of the part."""
    write_single_result(target, part, positions)


def finish_save(target: TableTarget, part: int, offsets: array, positions: array) -> None:
    """saveAsTextFile: out_id = (part file, byte offset of the line) -> in_id position."""
    write_save(target, part, offsets, positions)


def lists_by_slot(slots: array, values: array | None) -> Any:
    """``values`` (record i's value; None: i itself) grouped by key slot (0, 1, ...) into one list
    per slot, as a pyarrow ListArray built with one C++ sort (no Python object per key).

    Slots are numbered in first-seen order, so value_counts (first-seen order) lists the counts in
    slot order; the sort is stable, so each list keeps the records' order.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    value_type = pa.uint32() if values is None or values.typecode == "I" else pa.int64()
    n = len(slots)
    if n == 0:
        return pa.ListArray.from_arrays(pa.array([0], pa.int32()), pa.array([], value_type))
    slot_array = pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(slots)])
    order = pc.sort_indices(slot_array)
    if values is None:
        grouped = pc.cast(order, pa.uint32())
    else:
        grouped = pc.take(pa.Array.from_buffers(value_type, n, [None, pa.py_buffer(values)]), order)
    counts = pc.value_counts(slot_array).field("counts")
    offsets = pc.cast(pc.cumulative_sum(pa.concat_arrays([pa.array([0], pa.int64()), counts])), pa.int32())
    return pa.ListArray.from_arrays(offsets, grouped)


def positions_by_slot(slots: array, positions: array | None) -> tuple[memoryview, list[int]]:
    """The positions of each key grouped by key slot: one flat uint32 view and each slot's count."""
    lists = lists_by_slot(slots, positions)
    flat = lists.values
    view = memoryview(flat.buffers()[1]).cast("B").cast("I")[flat.offset: flat.offset + len(flat)]
    return view, lists.value_lengths().to_pylist()


def finish_combiner(target: TableTarget, part: int, keys: dict[Any, int], values: list[Any], slots: array,
                    positions: array | None) -> Iterator[tuple[Any, tuple[Any, int]]]:
    """Map-side combine: writes combiner id -> list of input positions, yields shuffle records."""
    write_list_local(target, part, lists_by_slot(slots, positions))
    hi = part << SHIFT
    for key, slot in keys.items():
        yield key, (values[slot], hi | slot)


def finish_group(part: int, side: int, keys: dict[Any, int], values: list[Any], slots: array,
                 positions: array | None) -> Iterator[tuple[Any, tuple[int, list[Any], array, int]]]:
    """Map side of groupByKey/join/cogroup: values and their positions travel per key, aligned."""
    grouped, counts = positions_by_slot(slots, positions)
    start = 0
    for key, slot in keys.items():
        chunk = array("I")
        chunk.frombytes(grouped[start:start + counts[slot]].tobytes())
        start += counts[slot]
        yield key, (side, values[slot], chunk, part)
