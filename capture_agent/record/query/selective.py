"""Selective replay of a what-if (Titian's): only the map-side partitions a deletion touches are
computed again, and merged with the aggregates the other partitions kept at capture.

It applies when the target is a ``collect`` of a combine (reduceByKey, combineByKey,
aggregateByKey, foldByKey) that reads the deleted input through narrow operations only, and every
partition of its combiner kept its map-side aggregates (``LINEAGE_KEEP_AGGREGATES``, written by
``worker.tails.keep_aggregates``). Otherwise ``selective_rerun`` returns None and the whole job
reruns (``stored_job``).

1. The input partitions holding deleted records are computed again without them, up to the
   map-side combine, with the job's own functions (in Spark tasks, on those partitions only).
2. Only the keys those partitions had (their kept aggregates) can change value.
3. The other partitions' kept aggregates of those keys and the recomputed ones are merged with the
   job's mergeCombiners (in Spark tasks).
4. The new output is the old one (kept at capture) with those keys' records replaced.

A ``reduceByKey(operator.add)`` of integers (a count, a sum) needs less: each key's new value is
its old one less what the deleted records contributed (their records read back by position, the
job's narrow functions run on them alone), and the keys lineage says die are gone.

Any other job (the combine's output joined, grouped, combined again, transformed before its action)
is replayed on the keys the deletion touches only where its shape allows (``query.delta``, from
``kept_combines``), else takes ``aggregated_combines``: each combine reading the deleted input
through narrow operations, whose partitions all kept their aggregates, is given to the replay as
an RDD made of them (the touched partitions combined again, the others' aggregates read back in
Spark tasks, all merged by key); the stages after it run on aggregates, never reading the
input's untouched partitions.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.query.engine import Frontier
from capture_agent.record.query.stage_paths import Recombined, Subtracted
from capture_agent.record.query.subtraction import invertible, lost_sums
from capture_agent.record.query.values import kept_results
from capture_agent.record.storage.ids import split_by_partition
from capture_agent.record.storage.tables import aggregates_name, read_rows
from capture_agent.record.worker.functions import KeptAggregates, LocalCombine

NARROW = ("map", "flatMap", "filter", "mapValues", "flatMapValues", "keyBy", "keys", "values")
COMBINES = ("reduceByKey", "combineByKey")


def _source_through_narrow(nodes: dict[str, Any], seq: int) -> tuple[int, dict[str, Any]] | None:
    """(seq, node) of the source node ``seq`` reads through narrow operations only, or None."""
    current = nodes[str(seq)]
    while "input" not in current:
        recipe = current["recipe"]
        if recipe["method"] not in NARROW or not isinstance(recipe["on"], dict) or any(
                "ref" in a for a in recipe["args"]):
            return None
        seq = recipe["on"]["ref"]
        current = nodes[str(seq)]
    return seq, current


def selective_rerun(job: Any, build: Any, target: str, deleted: Frontier, dead: BitMap64 | None = None,
                    paths: dict[str, str] | None = None) -> list[Any] | None:
    """The new output of ``target`` (a ``stored_job.StoredJob``'s output, ``build`` its replay's
    ``stored_job.Build``) without ``deleted``, replaying only what the deletion touches; None when
    the job's shape or what was kept does not allow it. ``dead``: the target's records lineage
    says die (with them, a sum of integers is updated from the deleted records alone); ``paths``
    ({"op #node": ``stage_paths`` name}) is given the path the combine took."""
    out = job.job["outputs"][target]
    nodes = job.job["nodes"]
    combine = nodes[str(out["node"])]["recipe"]
    if out["redo"]["method"] != "collect" or combine["method"] not in COMBINES or not isinstance(combine["on"], dict):
        return None
    found_source = _source_through_narrow(nodes, combine["on"]["ref"])
    if found_source is None or set(deleted) != {found_source[1]["input"]}:
        return None
    source_seq, source = found_source
    store = job.store
    point = store.point(target)
    old = kept_results(store.fs, point)  # data: the output kept at capture
    if old is None:
        return None
    label = f"{nodes[str(out['node'])]['op']} #{out['node']}"
    if dead is not None and invertible(combine):
        found = _subtracted(job, build, combine, source_seq, deleted[source["input"]], old, dead)
        if found is not None:
            if paths is not None:
                paths[label] = Subtracted.name
            return found
    reducer = store.point(point.parents[0]) if len(point.parents) == 1 else None
    combiner = store.point(reducer.parents[0]) if reducer is not None and len(reducer.parents) == 1 else None
    files = _aggregate_files(store, combiner, source)
    if files is None:
        return None
    touched = sorted(part for part, _ in split_by_partition(deleted[source["input"]]))
    keys: set[bytes] = set()
    for part in touched:
        keys.update(read_rows(store.fs, files[part], ["key"]).column("key").to_pylist())
    kept = _kept_aggregates(store, [files[p] for p in files if p not in touched], keys)
    fresh, merge_combiners = _combined_again(job, build, combine, touched)
    sc = job.sc
    pairs = fresh + [(pickle.loads(k), pickle.loads(v)) for k, v in kept]  # data: keys and aggregates
    merged = _spread(sc, pairs).reduceByKey(merge_combiners).collect() if pairs else []
    changing = {pickle.loads(k) for k in keys}
    if paths is not None:
        paths[label] = Recombined.name
    return [v for v in old.values() if v[0] not in changing] + merged


@dataclass
class KeptCombine:
    """A combine of the kept job whose map side kept every partition's aggregates, and reads a
    deleted input through narrow operations only: its ``touched`` partitions are combined again,
    the others' aggregates (``files``) stand in for them."""

    seq: int
    node: dict[str, Any]
    combine: dict[str, Any]  # its recipe
    source: int  # the source node it reads through narrow operations
    files: dict[int, str]  # {map-side partition: its kept aggregates}
    touched: list[int]  # the map-side partitions holding deleted records


def kept_combines(job: Any, deleted: Frontier) -> dict[int, KeptCombine]:
    """{node seq: ``KeptCombine``} for each combine of the kept job (``job.job["nodes"]``, whose
    entry names its ``combiner`` point) that reads a deleted input through narrow operations only
    and whose every map-side partition kept its aggregates."""
    nodes = job.job["nodes"]
    store = job.store
    found: dict[int, KeptCombine] = {}
    for seq, node in nodes.items():
        combine = node.get("recipe") or {}
        if combine.get("method") not in COMBINES or not isinstance(combine.get("on"), dict):
            continue
        source = _source_through_narrow(nodes, combine["on"]["ref"])
        combiner = store.points.get(node.get("combiner", ""))
        if source is None or source[1]["input"] not in deleted or combiner is None:
            continue
        files = _aggregate_files(store, combiner, source[1])
        if files is None:
            continue
        touched = sorted(part for part, _ in split_by_partition(deleted[source[1]["input"]]))
        found[int(seq)] = KeptCombine(int(seq), node, combine, source[0], files, touched)
    return found


def aggregated_combines(job: Any, build: Any, deleted: Frontier) -> dict[int, Any]:
    """{node seq: an RDD of its output without ``deleted``} for each ``kept_combines`` combine:
    the partitions the deletion touches are combined again (those only, with the job's
    functions), the others' aggregates are read back in Spark tasks, and all are merged by key
    with the job's mergeCombiners into as many partitions as the combine had (hash-partitioned: a
    custom partitionFunc is not kept). Empty when none qualifies."""
    given: dict[int, Any] = {}
    for seq, kept in kept_combines(job, deleted).items():
        fresh, merge_combiners = _combined_again(job, build, kept.combine, kept.touched)
        pairs = kept_pairs(job.sc, job.store, [path for part, path in kept.files.items() if part not in kept.touched])
        if fresh:
            pairs = pairs.union(_spread(job.sc, fresh))
        given[seq] = pairs.reduceByKey(merge_combiners, kept.node["partitions"])
    return given


def kept_pairs(sc: Any, store: Any, paths: list[Any], read: Any = None) -> Any:
    """The (key, aggregate) pairs of kept aggregate files, as an RDD read in Spark tasks (``read``:
    what reads one of ``paths``, ``KeptAggregates`` by default)."""
    # a few files per task: 100 tasks reading 100 small files cost more in scheduling than reading
    return sc.parallelize(paths, max(1, min(len(paths), 2 * sc.defaultParallelism))).flatMap(
        read or KeptAggregates(store.fs))


def _aggregate_files(store: Any, combiner: Any, source: dict[str, Any]) -> dict[int, str] | None:
    """{partition: its kept aggregates} of a combiner point, or None unless every partition kept them."""
    if combiner is None or combiner.kind != "combiner" or combiner.num_partitions != source["partitions"]:
        return None
    files = {part: f"{combiner.location}/{aggregates_name(part)}" for part in range(combiner.num_partitions)}
    return files if all(store.fs.exists(path) for path in files.values()) else None


def combine_functions(build: Any, combine: dict[str, Any]) -> tuple[Any, Any, Any]:
    """A combine's createCombiner (None for reduceByKey: the value itself), mergeValue and
    mergeCombiners, from its recipe (``build``: a ``stored_job.Build``)."""
    if combine["method"] == "reduceByKey":
        merge = build.value(combine["args"][0])
        return None, merge, merge
    create, merge, merge_combiners = (build.value(a) for a in combine["args"][:3])
    return create, merge, merge_combiners


def _combined_again(job: Any, build: Any, combine: dict[str, Any], touched: list[int]) -> tuple[list[Any], Any]:
    """The map-side (key, aggregate) pairs of the ``touched`` partitions of a combine's parent,
    computed again without the deleted records (in Spark tasks), and the job's mergeCombiners."""
    create, merge, merge_combiners = combine_functions(build, combine)
    parent = build.rdd(combine["on"]["ref"])
    return job.sc.runJob(parent.mapPartitions(LocalCombine(create, merge)), lambda it: it, touched), merge_combiners


def _spread(sc: Any, items: list[Any]) -> Any:
    """Items of the driver as an RDD: a slice per 10,000, at most one per core."""
    return sc.parallelize(items, max(1, min(len(items) // 10_000, sc.defaultParallelism)))


def _subtracted(job: Any, build: Any, combine: dict[str, Any], source_seq: int, ids: BitMap64,
                old: dict[int, Any], dead: BitMap64) -> list[Any] | None:
    """A reduceByKey(operator.add) of integers without some input records: each key's sum less the
    sum of the deleted records' pairs (``subtraction.lost_sums``); the keys lineage says die
    (``dead``: their output ids) are gone. None when a value is not an int."""
    lost = lost_sums(job, build, combine, source_seq, ids)
    if lost is None:
        return None
    new = []
    for out_id, (key, value) in old.items():
        if out_id in dead:
            continue
        if key in lost:
            if type(value) is not int:
                return None
            value -= lost[key]
        new.append((key, value))
    return new


def _kept_aggregates(store: Any, paths: list[str], keys: set[bytes]) -> list[tuple[bytes, bytes]]:
    """The (key, aggregate) rows of ``paths`` whose key is one of ``keys`` (pickled)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not keys:
        return []
    wanted = pa.array(sorted(keys), type=pa.binary())
    found: list[tuple[bytes, bytes]] = []
    for path in paths:
        table = read_rows(store.fs, path, ["key", "value"])
        chosen = table.filter(pc.is_in(table.column("key"), value_set=wanted))
        found.extend(zip(chosen.column("key").to_pylist(), chosen.column("value").to_pylist(), strict=True))
    return found
