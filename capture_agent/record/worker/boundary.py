"""Boundary agents: the task code at the head of a stage (shuffle outputs, mapPartitions,
repartition/coalesce, cartesian, cached RDDs). Each turns its input into ``(position, value)``
records and writes its partition's association table once, when its records are known.

Shipped to executors by value, like the rest of ``worker``.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from capture_agent.record.storage.ids import SHIFT
from capture_agent.record.storage.layouts.base import (
    bitmap64_bytes,
    bitmap_bytes,
    i64_column,
    int64_values,
    write_sets,
)
from capture_agent.record.storage.layouts.heads import write_first_rest
from capture_agent.record.storage.layouts.local import write_one_local, write_set_partition
from capture_agent.record.storage.layouts.shuffled import (
    write_one_global,
    write_pair,
    write_sets_per_parent,
)
from capture_agent.record.storage.tables import TableSink, TableStream, TableTarget
from capture_agent.record.worker.spill import CHECK_EVERY, MemoryBudget, Runs
from capture_agent.record.worker.tails import (
    ids_per_list,
    keep_aggregates,
    lists_by_slot,
    merged_combiners,
    spill_keyed,
)

Agent = Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]


def combine_reducer(target: TableTarget, merge_combiners: Callable[[Any, Any], Any], memory_mb: float,
                    ) -> Agent:
    """Reduce side of reduceByKey/combineByKey/...: out id -> list of combiner ids (spilling past
    ``memory_mb`` as ``worker.spill`` says). Reads the map side's blocks (``worker.shuffle``):
    batches of (keys, values, the records' combiner ids as array('q') bytes)."""

    def agent(split: int, batches: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        # like the map side: a slot per key, and flat arrays of (slot, combiner id) grouped once;
        # one tight loop per record of a batch, as the generated map side
        runs = Runs(MemoryBudget(memory_mb))
        index: dict[Any, int] = {}
        values: list[Any] = []
        slots = array("I")
        cids = array("q")
        get, keep_slot = index.get, slots.append
        c = next_check = 0
        for keys, combined_values, ids in batches:
            for key, combined in zip(keys, combined_values, strict=True):
                j = get(key)
                if j is None:
                    j = index[key] = len(values)
                    values.append(combined)
                else:
                    values[j] = merge_combiners(values[j], combined)
                keep_slot(j)
            cids.frombytes(ids)
            c += len(keys)
            if c >= next_check:  # the first batch, then every CHECK_EVERY records
                next_check = c + CHECK_EVERY
                if runs.budget.over():
                    spill_keyed(runs, index, values, slots, cids)
                    index, values, slots, cids = {}, [], array("I"), array("q")
                    get, keep_slot = index.get, slots.append
                    runs.budget.spilled()
        if not runs.count:
            yield from enumerate(zip(index, values, strict=True))
            if target.keep_aggregates and len(index) <= target.keep_aggregates:  # the output, for what-ifs
                keep_aggregates(target, split, zip(index, values, strict=True))
            index.clear()  # as the map side: the table is built once the keyed state is let go
            values.clear()
            write_first_rest(target, split, lists_by_slot(slots, cids))
            return
        spill_keyed(runs, index, values, slots, cids)
        del index, values, slots, cids
        stream = TableStream(target, split)
        for n, key, value in merged_combiners(runs, merge_combiners, stream, split, write_first_rest):
            yield n, (key, value)

    return agent


class Gathered:
    """A group reducer's state: per key (a slot, first-seen order) its values per side, and per
    side the flat ids of the records gathered with their keys' slots (grouped once, in Arrow)."""

    def __init__(self, nsides: int) -> None:
        self.index: dict[Any, int] = {}
        self.values: list[list[list[Any]]] = []  # per slot, per side
        self.slots = [array("I") for _ in range(nsides)]
        self.ids = [array("q") for _ in range(nsides)]

    def id_lists(self) -> list[Any]:
        """Per side, each key's ids (a ListArray of int64, one list per slot, maybe empty)."""
        return [lists_by_slot(slots, ids, nslots=len(self.values))
                for slots, ids in zip(self.slots, self.ids, strict=True)]

    def released_id_lists(self) -> list[Any]:
        """``id_lists`` once the keys and values are let go (their records yielded): the lists'
        Arrow temporaries then take the place the keyed state held instead of adding to it."""
        nslots = len(self.values)
        self.index.clear()
        self.values.clear()
        return [lists_by_slot(slots, ids, nslots=nslots) for slots, ids in zip(self.slots, self.ids, strict=True)]


def _gather(iterator: Iterable[Any], nsides: int, runs: Runs) -> Gathered:
    """Shuffled batches (``worker.shuffle``: side, map partition's ``hi``, keys, their value lists,
    the values' positions, or global ids for ``hi`` -1) -> per key, per side: the values and their
    global ids. Past the budget, what is gathered goes to disk
    as a run (``runs``) and gathering starts again."""
    state = Gathered(nsides)
    index, values, slots, flat = state.index, state.values, state.slots, state.ids
    get = index.get
    two = nsides == 2
    c = next_check = 0
    for side, hi, keys, value_lists, ids in iterator:
        keep_slot, keep_slots = slots[side].append, slots[side].extend
        for key, vals in zip(keys, value_lists, strict=True):
            j = get(key)
            if j is None:
                j = index[key] = len(values)
                values.append([[], []] if two else [[] for _ in range(nsides)])
            values[j][side].extend(vals)
            if len(vals) == 1:
                keep_slot(j)
            else:
                keep_slots(array("I", [j]) * len(vals))
        flat[side].frombytes(ids if hi < 0 else _lifted_bytes(hi, ids))
        c += len(keys)
        if c >= next_check:  # the first batch, then every CHECK_EVERY keys
            next_check = c + CHECK_EVERY
            if runs.budget.over():
                runs.spill(zip(index, values, strict=True), state.id_lists())
                state = Gathered(nsides)
                index, values, slots, flat = state.index, state.values, state.slots, state.ids
                get = index.get
                runs.budget.spilled()
    return state


def _lifted_bytes(hi: int, positions: Any) -> bytes | bytearray:
    """The bytes of uint32 positions as the int64 global ids ``hi`` | position: on a little-endian
    machine the position's 4 bytes then the partition's 4, interleaved by 8 strided copies in C
    (Arrow's cast and add left its allocator holding tens of MB per hot key)."""
    n = len(positions) // 4
    if sys.byteorder != "little":  # pragma: no cover - every platform Spark runs on is little-endian
        return array("q", [hi | p for p in memoryview(positions).cast("I")]).tobytes()
    out = bytearray(8 * n)
    for k in range(4):
        out[k::8] = positions[k::4]
    for k, byte in enumerate((hi >> SHIFT).to_bytes(4, "little")):
        if byte:
            out[4 + k::8] = bytes((byte,)) * n
    return out


def _merge_sides(a: list[list[Any]], b: list[list[Any]]) -> list[list[Any]]:
    for side, vals in enumerate(b):
        a[side].extend(vals)
    return a


Rows = Callable[[list[Any], list[list[list[Any]]], list[Any], str, TableSink, int], list[Any]]


def _group_rows(keys: list[Any], values: list[list[list[Any]]], ids: list[Any], mode: str, target: TableSink,
                split: int) -> list[Any]:
    from pyspark.resultiterable import ResultIterable

    write_first_rest(target, split, ids[0])
    return [(key, ResultIterable(vals[0])) for key, vals in zip(keys, values, strict=True)]


def _group_streamed(state: Gathered, target: TableTarget, split: int) -> Iterator[Any]:
    """groupByKey's rows as ``_group_rows`` makes them, yielded before its table is written; a
    task of at most ``keep_aggregates`` records keeps its groups too (``tails.keep_aggregates``:
    a what-if takes what left a group off its kept members and adds what came, ``query.regroup``)."""
    from pyspark.resultiterable import ResultIterable

    for key, vals in zip(state.index, state.values, strict=True):
        yield key, ResultIterable(vals[0])
    if target.keep_aggregates and len(state.slots[0]) <= target.keep_aggregates:
        keep_aggregates(target, split, ((key, vals[0]) for key, vals in zip(state.index, state.values, strict=True)))
    write_first_rest(target, split, state.released_id_lists()[0])


def _cogroup_rows(keys: list[Any], values: list[list[list[Any]]], ids: list[Any], mode: str, target: TableSink,
                  split: int) -> list[Any]:
    import pyarrow.compute as pc
    from pyspark.resultiterable import ResultIterable

    if mode == "intersection":
        kept = pc.and_(pc.greater(ids[0].value_lengths(), 0), pc.greater(ids[1].value_lengths(), 0))
        out = [key for key, keep in zip(keys, kept.to_pylist(), strict=True) if keep]
        ids = [side.filter(kept) for side in ids]
    else:
        out = [(key, tuple(ResultIterable(vs) for vs in vals)) for key, vals in zip(keys, values, strict=True)]
    per_side = [[bitmap64_bytes(chunk) for chunk in ids_per_list(side)] for side in ids]
    write_sets_per_parent(target, split, per_side)
    return out


def _join_rows(keys: list[Any], values: list[list[list[Any]]], ids: list[Any], mode: str, target: TableSink,
               split: int) -> list[Any]:
    out: list[Any] = []
    append = out.append
    left_missing = mode in ("right", "full")
    right_missing = mode in ("left", "full")
    for key, (lv, rv) in zip(keys, values, strict=True):
        if not lv and left_missing:
            lv = [None]
        if not rv and right_missing:
            rv = [None]
        for v in lv:
            for w in rv:
                append((key, (v, w)))
    lefts, rights = _pair_ids(ids[0], ids[1], left_missing, right_missing)
    write_pair(target, split, lefts, rights)
    return out


def _pair_ids(lefts: Any, rights: Any, left_missing: bool, right_missing: bool) -> tuple[Any, Any]:
    """The (left id, right id) of each output of ``_join_rows``, in its order, from each key's
    left and right ids (ListArrays): per key, every left id with every right id, left-major;
    null for a side an outer join keeps missing (``left_missing``/``right_missing``). Computed
    per partition in Arrow: row r of key k is pair (r - start_k) // b_k, (r - start_k) % b_k."""
    import pyarrow as pa
    import pyarrow.compute as pc

    one = pa.scalar(1, pa.int64())
    a = pc.cast(lefts.value_lengths(), pa.int64())
    b = pc.cast(rights.value_lengths(), pa.int64())
    a_out = pc.max_element_wise(a, one) if left_missing else a
    b_out = pc.max_element_wise(b, one) if right_missing else b
    per_key = pc.multiply(a_out, b_out)
    starts = pa.concat_arrays([pa.array([0], pa.int64()), pc.cumulative_sum(per_key)])
    total = starts[-1].as_py()
    rows = pa.ListArray.from_arrays(pc.cast(starts, pa.int32()), pa.nulls(total, pa.int8()))
    key = pc.list_parent_indices(rows)
    row = i64_column(array("q", range(total)))
    local = pc.subtract(row, pc.take(starts, key))
    width = pc.take(b_out, key)
    left_pair = pc.divide(local, width)  # integers: truncated, as they are >= 0
    right_pair = pc.subtract(local, pc.multiply(left_pair, width))

    def ids(lists: Any, counts: Any, pair: Any) -> Any:
        index = pc.add(pc.take(pc.cast(lists.offsets, pa.int64()), key), pair)
        index = pc.if_else(pc.equal(pc.take(counts, key), 0), pa.scalar(None, pa.int64()), index)
        return pc.take(lists.values, index)

    return ids(lefts, a, left_pair), ids(rights, b, right_pair)


def _subtract_rows(keys: list[Any], values: list[list[list[Any]]], ids: list[Any], mode: str, target: TableSink,
                   split: int) -> list[Any]:
    import pyarrow.compute as pc

    out: list[Any] = []
    by_key = mode == "subtract_by_key"
    for key, (lv, rv) in zip(keys, values, strict=True):
        if lv and not rv:
            out.extend([(key, v) for v in lv] if by_key else [key] * len(lv))
    kept = pc.and_(pc.greater(ids[0].value_lengths(), 0), pc.equal(ids[1].value_lengths(), 0))
    write_one_global(target, split, int64_values(pc.list_flatten(ids[0].filter(kept))))
    return out


_REDUCERS: dict[str, Rows] = {
    "group": _group_rows, "cogroup": _cogroup_rows, "intersection": _cogroup_rows, "join": _join_rows,
    "left": _join_rows, "right": _join_rows, "full": _join_rows, "subtract_by_key": _subtract_rows,
    "subtract": _subtract_rows}
GROUP_MODES = tuple(_REDUCERS)


def group_reducer(target: TableTarget, mode: str, nsides: int, memory_mb: float) -> Agent:
    """Reduce side of groupByKey, cogroup, the joins, subtract and intersection (``mode``),
    spilling past ``memory_mb`` as ``worker.spill`` says."""
    rows = _REDUCERS[mode]

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        runs = Runs(MemoryBudget(memory_mb))
        state = _gather(iterator, nsides, runs)
        if not runs.count:
            if mode == "group":  # its rows need no ids: they stream, and the table comes last
                yield from enumerate(_group_streamed(state, target, split))
            else:
                yield from enumerate(rows(list(state.index), state.values, state.id_lists(), mode, target, split))
            return
        if state.index:
            runs.spill(zip(state.index, state.values, strict=True), state.id_lists())
        del state
        stream = TableStream(target, split)
        n = 0
        for keys, values, ids in runs.merged(_merge_sides):
            assert ids is not None
            for record in rows(keys, values, ids, mode, stream, split):
                yield n, record
                n += 1
        stream.close()

    return agent


def keyed_renumber_agent(target: TableTarget, sort_key: Callable[[Any], Any] | None = None, ascending: bool = True,
                         ) -> Agent:
    """After partitionBy/sortByKey shuffles: (k, (v, gid)) -> records (i, (k, v)), table i -> gid.

    Without a sort the records stream through (only their ids are kept, 8 bytes each): the table
    is whole once the partition is, so the head is not eager."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        if sort_key is None:
            ids = array("q")
            keep = ids.append
            for i, (key, (value, gid)) in enumerate(iterator):
                keep(gid)
                yield i, (key, value)
            write_one_global(target, split, ids)
            return
        records = list(iterator)
        records.sort(key=lambda r: sort_key(r[0]), reverse=not ascending)
        write_one_global(target, split, array("q", [r[1][1] for r in records]))
        for i, (key, (value, _)) in enumerate(records):
            yield i, (key, value)

    return agent


def sort_within_agent(target: TableTarget, sort_key: Callable[[Any], Any], ascending: bool,
                      ) -> Agent:
    """sortByKey into one partition: (pos, (k, v)) records sorted by key, table i -> pos."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        records = sorted(iterator, key=lambda r: sort_key(r[1][0]), reverse=not ascending)
        write_one_local(target, split, array("I", [r[0] for r in records]))
        for i, (_, record) in enumerate(records):
            yield i, record

    return agent


def values_renumber_agent(target: TableTarget) -> Agent:
    """After repartition/coalesce: (gid, v) -> (i, v), table i -> gid; records stream through."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        ids = array("q")
        keep = ids.append
        for i, (gid, value) in enumerate(iterator):
            keep(gid)
            yield i, value
        write_one_global(target, split, ids)

    return agent


def cartesian_agent(target: TableTarget) -> Agent:
    """cartesian and zip: ((gid_l, a), (gid_r, b)) -> (i, (a, b)), table i -> (gid_l, gid_r); streams."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        lefts: list[int | None] = []
        rights: list[int | None] = []
        for i, ((left, a), (right, b)) in enumerate(iterator):
            lefts.append(left)
            rights.append(right)
            yield i, (a, b)
        write_pair(target, split, lefts, rights)

    return agent


def partitions_agent(target: TableTarget, func: Callable[..., Iterable[Any]], with_index: bool,
                     whole_partition: bool = False) -> Agent:
    """mapPartitions/glom. By default an output depends on the inputs the function pulled since
    the previous output, and an output for which it pulled nothing new on the previous output's
    inputs: exact for map-, filter-then-map, flatMap- and aggregate-shaped functions, more than
    exact for buffering ones (sorted(it): every output <- every input). ``whole_partition``:
    every output depends on every input of the partition (one table row per partition)."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        pulled = array("I")

        def source() -> Iterator[Any]:
            for pos, value in iterator:
                pulled.append(pos)
                yield value

        produced = func(split, source()) if with_index else func(source())
        serialized: list[bytes] = []
        previous = bitmap_bytes(())
        mark = 0
        n = 0
        for value in produced:
            if not whole_partition:
                if len(pulled) > mark:
                    previous = bitmap_bytes(pulled[mark:])
                    mark = len(pulled)
                serialized.append(previous)
            yield n, value
            n += 1
        for _ in source():  # a function that stopped early still read what it read
            pass
        if whole_partition:
            write_set_partition(target, split, n, pulled)
        else:
            write_sets(target, split, serialized)

    return agent


def stage_capture_agent(target: TableTarget) -> Agent:
    """A cached RDD in the middle of a stage: (pos, v) -> (i, v), table i -> pos."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        positions = array("I")
        n = 0
        for pos, value in iterator:
            positions.append(pos)
            yield n, value
            n += 1
        write_one_local(target, split, positions)

    return agent
