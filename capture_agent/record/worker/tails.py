"""The ends of generated stage functions: what a fused stage does with each (position, record).

Called by the code ``capture/codegen.py`` generates; each writes its partition's table once, at
the end of the partition, through its layout's writer. Shipped to executors by value.

The keyed tails hold their lineage in flat arrays beside the job's own state. The group
(groupByKey, join and cogroup sides) keeps ``key -> slot``, a list of values by slot and one slot
per record. The map-side combine does too until its keys are many, then ``key -> value`` as
PySpark does and one key tag per record (``worker.combine``): at the end it yields its keys in
dict order (combiner id n is the n-th key), then, once the dict is let go, turns its records'
slots and tags into key slots and groups the positions by slot.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from capture_agent.record.storage.ids import SHIFT
from capture_agent.record.storage.layouts.base import i64_column, int64_values, u32_column
from capture_agent.record.storage.layouts.counts import lifted
from capture_agent.record.storage.layouts.heads import write_first_rest
from capture_agent.record.storage.layouts.inputs import write_text_input
from capture_agent.record.storage.layouts.local import (
    write_one_local,
    write_save,
    write_single_result,
)
from capture_agent.record.storage.tables import TableStream, TableTarget, write_once, write_parquet
from capture_agent.record.worker.combine import CombineState
from capture_agent.record.worker.inputs import dumps
from capture_agent.record.worker.shuffle import ShuffleSpec, combine_blocks, group_blocks
from capture_agent.record.worker.spill import Runs, by_slot


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


def lists_by_slot(slots: array, values: array | None, base: int = 0, hi: int = -1, nslots: int = -1) -> Any:
    """``values`` (record i's value; None: ``base`` + i) grouped by key slot (0, 1, ...) into one
    list per slot, as a pyarrow ListArray built with one C++ sort (no Python object per key);
    given ``hi`` (a partition's ``part << 32``), positions as global ids (int64). Slots are
    numbered in first-seen order; given ``nslots``, some may have no record (``spill.by_slot``).
    """
    return _grouped(u32_column(slots), values, base, hi, nslots)


def _grouped(slots: Any, values: array | None, base: int, hi: int, nslots: int = -1) -> Any:
    """``lists_by_slot`` from the records' slots as a pyarrow uint32 array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    flat = None if values is None else u32_column(values) if values.typecode == "I" else i64_column(values)
    lists = by_slot(slots, flat, nslots)
    if hi < 0 and not (values is None and base):
        return lists
    grouped = lists.values
    if values is None and base:
        grouped = pc.add(grouped, pa.scalar(base, pa.uint32()))
    if hi >= 0:
        grouped = lifted(hi >> SHIFT, grouped)
    return pa.ListArray.from_arrays(lists.offsets, grouped)


def ids_per_list(lists: Any) -> Iterator[bytes]:
    """The global ids of each list of ``lists`` (a ListArray of int64), in order, as the bytes of
    an array('q') (a bytes object pickles in C; an array goes through cloudpickle's reducer, a
    few microseconds each)."""
    flat = int64_values(lists.flatten()).tobytes()
    start = 0
    for n in lists.value_lengths().to_pylist():
        yield flat[start * 8:(start + n) * 8]
        start += n


def spill_keyed(runs: Runs, keys: dict[Any, int], values: list[Any], slots: array, ids: array | None,
                base: int = 0, hi: int = -1) -> None:
    """Sends a task's keyed state to disk as one run: its (key, value) pairs and each key's ids
    (positions, or global ids given ``hi``) as Arrow lists. Nothing to send: no run."""
    if not keys:
        return
    runs.spill(zip(keys, values, strict=True), [lists_by_slot(slots, ids, base, hi)])


def spill_combined(runs: Runs, state: CombineState, base: int = 0) -> None:
    """Sends a map-side combine's state to disk as one run: its (key, value) pairs, in dict order,
    and each key's positions as Arrow lists. Nothing to send: no run."""
    if not state.keys:
        return
    runs.spill(state.items(), [_grouped(state.record_slots(), state.positions, base, -1)])


def concat_values(a: list[Any], b: list[Any]) -> list[Any]:
    """Merges two spilled group values (lists of a key's values), in run order."""
    a.extend(b)
    return a


def finish_combiner(target: TableTarget, part: int, state: CombineState, base: int = 0, runs: Runs | None = None,
                    merge: Callable[[Any, Any], Any] | None = None, shuffle: ShuffleSpec | None = None,
                    ) -> Iterator[Any]:
    """Map-side combine: yields shuffle records (combiner id n: the n-th key in dict order), writes
    combiner id -> list of input positions. Records are ``(key, (value, combiner id))``, or given
    ``shuffle`` the shuffle's blocks (``worker.shuffle``).

    A task that spilled (``runs``) merges its runs bucket by bucket (``worker.spill``)."""
    hi = part << SHIFT
    if runs is None or not runs.count:
        if shuffle is None:
            yield from state.shuffle_records(hi)
        else:
            yield from combine_blocks(state.id_records(hi), shuffle)
        # an empty partition keeps an empty file: a what-if then knows it holds no key
        if target.keep_aggregates and len(state.keys) <= target.keep_aggregates:
            keep_aggregates(target, part, state.items())
        # the table needs only the flat arrays: built once the keys and values are let go, its Arrow
        # temporaries (and pyarrow itself) take the place they held instead of adding to it
        state.clear()
        write_first_rest(target, part, _grouped(state.record_slots(), state.positions, base, -1))
        return
    assert merge is not None
    spill_combined(runs, state, base)
    state.clear()
    merged = merged_combiners(runs, merge, TableStream(target, part), part, write_first_rest)
    if shuffle is None:
        for n, key, value in merged:
            yield key, (value, hi | n)
    else:
        yield from combine_blocks(((hi | n, key, value) for n, key, value in merged), shuffle)


def keep_aggregates(target: TableTarget, part: int, pairs: Iterable[tuple[Any, Any]]) -> None:
    """Writes a combine partition's (key, aggregate) pairs, pickled, beside its table: a combiner's
    map-side aggregates, which a what-if that deletes records of other partitions merges instead of
    recomputing them (``query.selective``), or a reducer's reduced values, which a what-if reads
    instead of merging those (``query.delta``). Never raises: without the file the what-if
    recomputes what it holds."""
    import pyarrow as pa

    try:
        keys, values = [], []
        for key, value in pairs:
            keys.append(dumps(key))
            values.append(dumps(value))
        columns = {"key": pa.array(keys, type=pa.binary()), "value": pa.array(values, type=pa.binary())}
        write_once(target.fs, target.local, target.aggregates_path(part), lambda dest: write_parquet(dest, columns))
    except Exception as exc:  # noqa: BLE001 - the job must finish whatever the store does
        print(f"lineage: cannot keep the aggregates of {target.aggregates_path(part)}: {exc}", file=sys.stderr)


def merged_combiners(runs: Runs, merge: Callable[[Any, Any], Any], stream: TableStream, part: int,
                     write: Callable[[Any, int, Any], None]) -> Iterator[tuple[int, Any, Any]]:
    """(n, key, combined value) of a spilled combine task's runs, merged bucket by bucket; each
    bucket's id lists go to ``stream`` through the layout's ``write``, then it closes."""
    n = 0
    for keys, values, ids in runs.merged(merge):
        for key, value in zip(keys, values, strict=True):
            yield n, key, value
            n += 1
        assert ids is not None
        write(stream, part, ids[0])
    stream.close()


def finish_group(part: int, side: int, keys: dict[Any, int], values: list[Any], slots: array,
                 positions: array | None, base: int = 0, runs: Runs | None = None,
                 shuffle: ShuffleSpec | None = None) -> Iterator[bytes]:
    """Map side of groupByKey/join/cogroup: per key, its values and their ids, aligned, written as
    the shuffle's blocks (``worker.shuffle``): positions in the partition, or global ids once the
    task spilled."""
    assert shuffle is not None
    if runs is None or not runs.count:
        by_slot = _positions_by_slot(slots, positions, base)
        yield from group_blocks(side, part << SHIFT, _keyed_ids(keys, values, by_slot), shuffle)
        keys.clear()  # sent: let go before the stage's input writes its table
        values.clear()
        return
    spill_keyed(runs, keys, values, slots, positions, base, part << SHIFT)
    keys.clear()
    values.clear()
    yield from group_blocks(side, -1, _merged_groups(runs), shuffle)


def _positions_by_slot(slots: array, positions: array | None, base: int) -> memoryview:
    """Each record's position (``positions[i]``, or ``base`` + i), ordered by the record's slot
    with one stable sort (a key's positions stay in record order): the bytes of a uint32 array,
    4 a record. ``slots`` is emptied once sorted, and the sort's own int64 indices are let go at
    once: at most 24 bytes a record at a time, at the task's end when its memory peaks."""
    import pyarrow as pa
    import pyarrow.compute as pc

    order = pc.sort_indices(u32_column(slots))
    del slots[:]  # sorted: its bytes go before the positions are made (the sort's view of it is gone)
    if positions is None:
        by_slot = pc.cast(order, pa.uint32())  # positions < 2**32
        if base:
            by_slot = pc.add(by_slot, pa.scalar(base, pa.uint32()))
    else:
        by_slot = pc.take(u32_column(positions), order)
    del order
    pa.default_memory_pool().release_unused()  # Arrow's allocator keeps freed pages otherwise
    return memoryview(by_slot.buffers()[1]).cast("B")[by_slot.offset * 4:(by_slot.offset + len(by_slot)) * 4]


def _keyed_ids(keys: dict[Any, int], values: list[Any], by_slot: memoryview,
               ) -> Iterator[tuple[Any, list[Any], memoryview]]:
    """(key, its values, the bytes of their uint32 positions) in slot order."""
    start = 0
    for key, slot in keys.items():
        vals = values[slot]
        end = start + 4 * len(vals)  # a key's records, as each appended one value
        yield key, vals, by_slot[start:end]
        start = end


def _merged_groups(runs: Runs) -> Iterator[tuple[Any, list[Any], bytes]]:
    """(key, its values, their global ids) of a spilled group side's runs, merged bucket by bucket."""
    for bucket_keys, bucket_values, lists in runs.merged(concat_values):
        assert lists is not None
        yield from zip(bucket_keys, bucket_values, ids_per_list(lists[0]), strict=True)
