"""Boundary agents: the task code at the head of a stage (shuffle outputs, mapPartitions,
repartition/coalesce, cartesian, cached RDDs). Each turns its input into ``(position, value)``
records and writes its partition's association table once, when its records are known.

Shipped to the workers by value, like ``_runtime``.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from capture_agent.record._runtime import (
    SHIFT,
    _arrow,
    _bitmap64_bytes,
    _bitmap_bytes,
    _dense_out_ids,
    _i64,
    finish_one_local,
    write_table,
)


def combine_reducer(location: str, merge_combiners: Callable[[Any, Any], Any],
                    ) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """Reduce side of reduceByKey/combineByKey/...: out id -> list of combiner ids."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        merged: dict = {}
        for key, (combined, cid) in iterator:
            entry = merged.get(key)
            if entry is None:
                merged[key] = [combined, [cid]]
            else:
                entry[0] = merge_combiners(entry[0], combined)
                entry[1].append(cid)
        pa, _ = _arrow()
        write_table(location, split, {
            "out_id": _dense_out_ids(pa, split, len(merged)),
            "in_ids": pa.array([entry[1] for entry in merged.values()], type=pa.list_(pa.int64())),
        })
        i = 0
        for key, entry in merged.items():
            yield i, (key, entry[0])
            i += 1

    return agent


def _expand(chunks: list[tuple[int, array]]) -> list[int]:
    return [hi | pos for hi, positions in chunks for pos in positions]


def group_reducer(location: str, mode: str, nsides: int,
                  ) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """Reduce side of groupByKey, cogroup, the joins, subtract and intersection."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        from pyspark.resultiterable import ResultIterable

        grouped: dict = {}
        for key, (side, values, positions, part) in iterator:
            entry = grouped.get(key)
            if entry is None:
                entry = grouped[key] = ([[] for _ in range(nsides)], [[] for _ in range(nsides)])
            entry[0][side].extend(values)
            entry[1][side].append((part << SHIFT, positions))
        pa, _ = _arrow()
        out: list[Any] = []
        columns: dict[str, Any]
        if mode == "group":
            sets = []
            for key, (values, chunks) in grouped.items():
                out.append((key, ResultIterable(values[0])))
                sets.append(_bitmap64_bytes(_expand(chunks[0])))
            columns = {"in_ids": pa.array(sets, type=pa.binary())}
        elif mode in ("cogroup", "intersection"):
            per_side: list[list[bytes]] = [[] for _ in range(nsides)]
            for key, (values, chunks) in grouped.items():
                if mode == "intersection":
                    if not (values[0] and values[1]):
                        continue
                    out.append(key)
                else:
                    out.append((key, tuple(ResultIterable(vs) for vs in values)))
                for side in range(nsides):
                    per_side[side].append(_bitmap64_bytes(_expand(chunks[side])))
            columns = {f"in_ids_{side}": pa.array(per_side[side], type=pa.binary()) for side in range(nsides)}
        elif mode in ("join", "left", "right", "full"):
            lefts: list[Any] = []
            rights: list[Any] = []
            for key, (values, chunks) in grouped.items():
                lv, rv = values
                lid, rid = _expand(chunks[0]), _expand(chunks[1])
                if not lv and mode in ("right", "full"):
                    lv, lid = [None], [None]
                if not rv and mode in ("left", "full"):
                    rv, rid = [None], [None]
                for v, vi in zip(lv, lid, strict=True):
                    for w, wi in zip(rv, rid, strict=True):
                        out.append((key, (v, w)))
                        lefts.append(vi)
                        rights.append(wi)
            columns = {"left_id": pa.array(lefts, type=pa.int64()), "right_id": pa.array(rights, type=pa.int64())}
        elif mode in ("subtract_by_key", "subtract"):
            ids: list[int] = []
            for key, (values, chunks) in grouped.items():
                if values[0] and not values[1]:
                    for v, vi in zip(values[0], _expand(chunks[0]), strict=True):
                        out.append((key, v) if mode == "subtract_by_key" else key)
                        ids.append(vi)
            columns = {"in_id": pa.array(ids, type=pa.int64())}
        else:  # pragma: no cover - the compiler only builds the modes above
            raise ValueError(f"unknown group mode {mode}")
        write_table(location, split, {"out_id": _dense_out_ids(pa, split, len(out)), **columns})
        yield from enumerate(out)

    return agent


def keyed_renumber_agent(location: str, sort_key: Callable[[Any], Any] | None = None, ascending: bool = True,
                         ) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """After partitionBy/sortByKey shuffles: (k, (v, gid)) -> records (i, (k, v)), table i -> gid."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        records = list(iterator)
        if sort_key is not None:
            records.sort(key=lambda r: sort_key(r[0]), reverse=not ascending)
        pa, _ = _arrow()
        ids = array("q", [r[1][1] for r in records])
        write_table(location, split, {"out_id": _dense_out_ids(pa, split, len(ids)), "in_id": _i64(pa, ids)})
        for i, (key, (value, _)) in enumerate(records):
            yield i, (key, value)

    return agent


def sort_within_agent(location: str, sort_key: Callable[[Any], Any], ascending: bool,
                      ) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """sortByKey into one partition: (pos, (k, v)) records sorted by key, table i -> pos."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        records = sorted(iterator, key=lambda r: sort_key(r[1][0]), reverse=not ascending)
        pa, _ = _arrow()
        finish_one_local(location, split, array("I", [r[0] for r in records]))
        del pa
        for i, (_, record) in enumerate(records):
            yield i, record

    return agent


def values_renumber_agent(location: str) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """After repartition/coalesce: (gid, v) -> (i, v), table i -> gid."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        records = list(iterator)
        pa, _ = _arrow()
        ids = array("q", [r[0] for r in records])
        write_table(location, split, {"out_id": _dense_out_ids(pa, split, len(ids)), "in_id": _i64(pa, ids)})
        for i, (_, value) in enumerate(records):
            yield i, value

    return agent


def cartesian_agent(location: str) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """cartesian: ((gid_l, a), (gid_r, b)) -> (i, (a, b)), table i -> (gid_l, gid_r)."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        records = list(iterator)
        pa, _ = _arrow()
        write_table(location, split, {
            "out_id": _dense_out_ids(pa, split, len(records)),
            "left_id": pa.array([r[0][0] for r in records], type=pa.int64()),
            "right_id": pa.array([r[1][0] for r in records], type=pa.int64()),
        })
        for i, ((_, a), (_, b)) in enumerate(records):
            yield i, (a, b)

    return agent


def partitions_agent(location: str, func: Callable[..., Iterable[Any]], with_index: bool,
                     whole_partition: bool = False) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
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
        previous = _bitmap_bytes(())
        mark = 0
        n = 0
        for value in produced:
            if not whole_partition:
                if len(pulled) > mark:
                    previous = _bitmap_bytes(pulled[mark:])
                    mark = len(pulled)
                serialized.append(previous)
            yield n, value
            n += 1
        for _ in source():  # a function that stopped early still read what it read
            pass
        pa, _ = _arrow()
        if whole_partition:
            write_table(location, split, {"out_count": pa.array([n], type=pa.int64()),
                                          "in_ids": pa.array([_bitmap_bytes(pulled)], type=pa.binary())})
        else:
            write_table(location, split, {"out_id": _dense_out_ids(pa, split, n),
                                          "in_ids": pa.array(serialized, type=pa.binary())})

    return agent


def stage_capture_agent(location: str) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]:
    """A cached RDD in the middle of a stage: (pos, v) -> (i, v), table i -> pos."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        positions = array("I")
        n = 0
        for pos, value in iterator:
            positions.append(pos)
            yield n, value
            n += 1
        finish_one_local(location, split, positions)

    return agent
