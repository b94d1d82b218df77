"""Boundary agents: the task code at the head of a stage (shuffle outputs, mapPartitions,
repartition/coalesce, cartesian, cached RDDs). Each turns its input into ``(position, value)``
records and writes its partition's association table once, when its records are known.

Shipped to executors by value, like the rest of ``worker``.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from typing import Any

from capture_agent.record.storage.layouts.base import bitmap64_bytes, bitmap_bytes, write_sets
from capture_agent.record.storage.layouts.local import write_one_local, write_set_partition
from capture_agent.record.storage.layouts.shuffled import (
    write_list_global,
    write_one_global,
    write_pair,
    write_sets_per_parent,
)
from capture_agent.record.storage.tables import TableSink, TableStream, TableTarget
from capture_agent.record.worker.spill import CHECK_EVERY, MemoryBudget, Runs, merge_by_key
from capture_agent.record.worker.tails import lists_by_slot, merged_combiners, spill_keyed

Agent = Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]


def combine_reducer(target: TableTarget, merge_combiners: Callable[[Any, Any], Any], memory_mb: float,
                    ) -> Agent:
    """Reduce side of reduceByKey/combineByKey/...: out id -> list of combiner ids (spilling past
    ``memory_mb`` as ``worker.spill`` says)."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        # like the map side: a slot per key, and flat arrays of (slot, combiner id) grouped once
        index: dict[Any, int] = {}
        values: list[Any] = []
        slots = array("I")
        cids = array("q")
        runs = Runs(MemoryBudget(memory_mb))
        records = iter(iterator)
        for chunk in iter(lambda: list(islice(records, CHECK_EVERY)), []):
            keys, pairs = zip(*chunk, strict=True)
            combined, ids = zip(*pairs, strict=True)
            merge_by_key(zip(keys, combined, strict=True), merge_combiners, index, values, slots)
            cids.extend(ids)
            if runs.budget.over():  # every CHECK_EVERY records
                spill_keyed(runs, index, values, slots, cids)
                index, values, slots, cids = {}, [], array("I"), array("q")
                runs.budget.spilled()
        if not runs.count:
            write_list_global(target, split, lists_by_slot(slots, cids))
            yield from enumerate(zip(index, values, strict=True))
            return
        spill_keyed(runs, index, values, slots, cids)
        del index, values, slots, cids
        stream = TableStream(target, split)
        for n, key, value in merged_combiners(runs, merge_combiners, stream, split, write_list_global):
            yield n, (key, value)

    return agent


Gathered = dict[Any, tuple[list[list[Any]], list[array]]]


def _gather(iterator: Iterable[Any], nsides: int, runs: Runs) -> Gathered:
    """Shuffled (key, (side, values, ids)) -> per key, per side: the values and their global ids
    (``ids``: one id, or an array('q') of them). Past the budget, what is gathered goes to disk as
    a run (``runs``) and gathering starts again."""
    grouped: Gathered = {}
    get = grouped.get
    c = next_check = 0
    for key, (side, values, ids) in iterator:
        entry = get(key)
        if entry is None:
            entry = grouped[key] = ([[] for _ in range(nsides)], [array("q") for _ in range(nsides)])
        entry[0][side].extend(values)
        if type(ids) is int:
            entry[1][side].append(ids)
        else:
            entry[1][side].extend(ids)
        c += 1
        if c >= next_check:  # the first record, then every CHECK_EVERY
            next_check = c + CHECK_EVERY
            if grouped and runs.budget.over():
                runs.spill(grouped.items())
                grouped = {}
                get = grouped.get
                runs.budget.spilled()
    return grouped


def _merge_gathered(a: Any, b: Any) -> Any:
    for side in range(len(a[0])):
        a[0][side].extend(b[0][side])
        a[1][side].extend(b[1][side])
    return a


def _group_rows(grouped: Gathered, mode: str, nsides: int, target: TableSink, split: int) -> list[Any]:
    from pyspark.resultiterable import ResultIterable

    out: list[Any] = []
    sets = []
    for key, (values, ids) in grouped.items():
        out.append((key, ResultIterable(values[0])))
        sets.append(bitmap64_bytes(ids[0]))
    write_sets(target, split, sets)
    return out


def _cogroup_rows(grouped: Gathered, mode: str, nsides: int, target: TableSink, split: int) -> list[Any]:
    from pyspark.resultiterable import ResultIterable

    out: list[Any] = []
    per_side: list[list[bytes]] = [[] for _ in range(nsides)]
    for key, (values, ids) in grouped.items():
        if mode == "intersection":
            if not (values[0] and values[1]):
                continue
            out.append(key)
        else:
            out.append((key, tuple(ResultIterable(vs) for vs in values)))
        for side in range(nsides):
            per_side[side].append(bitmap64_bytes(ids[side]))
    write_sets_per_parent(target, split, per_side)
    return out


def _join_rows(grouped: Gathered, mode: str, nsides: int, target: TableSink, split: int) -> list[Any]:
    out: list[Any] = []
    lefts: list[int | None] = []
    rights: list[int | None] = []
    for key, (values, ids) in grouped.items():
        lv, rv = values
        lid: list[int | None] = list(ids[0])
        rid: list[int | None] = list(ids[1])
        if not lv and mode in ("right", "full"):
            lv, lid = [None], [None]
        if not rv and mode in ("left", "full"):
            rv, rid = [None], [None]
        for v, vi in zip(lv, lid, strict=True):
            for w, wi in zip(rv, rid, strict=True):
                out.append((key, (v, w)))
                lefts.append(vi)
                rights.append(wi)
    write_pair(target, split, lefts, rights)
    return out


def _subtract_rows(grouped: Gathered, mode: str, nsides: int, target: TableSink, split: int) -> list[Any]:
    out: list[Any] = []
    kept = array("q")
    for key, (values, ids) in grouped.items():
        if values[0] and not values[1]:
            for v, vi in zip(values[0], ids[0], strict=True):
                out.append((key, v) if mode == "subtract_by_key" else key)
                kept.append(vi)
    write_one_global(target, split, kept)
    return out


_REDUCERS = {"group": _group_rows, "cogroup": _cogroup_rows, "intersection": _cogroup_rows, "join": _join_rows,
             "left": _join_rows, "right": _join_rows, "full": _join_rows, "subtract_by_key": _subtract_rows,
             "subtract": _subtract_rows}
GROUP_MODES = tuple(_REDUCERS)


def group_reducer(target: TableTarget, mode: str, nsides: int, memory_mb: float) -> Agent:
    """Reduce side of groupByKey, cogroup, the joins, subtract and intersection (``mode``),
    spilling past ``memory_mb`` as ``worker.spill`` says."""
    rows = _REDUCERS[mode]

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        runs = Runs(MemoryBudget(memory_mb))
        grouped = _gather(iterator, nsides, runs)
        if not runs.count:
            yield from enumerate(rows(grouped, mode, nsides, target, split))
            return
        if grouped:
            runs.spill(grouped.items())
        del grouped
        stream = TableStream(target, split)
        n = 0
        for keys, values, _ in runs.merged(_merge_gathered):
            for record in rows(dict(zip(keys, values, strict=True)), mode, nsides, stream, split):
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
    """cartesian: ((gid_l, a), (gid_r, b)) -> (i, (a, b)), table i -> (gid_l, gid_r); streams."""

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
