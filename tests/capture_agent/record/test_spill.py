"""Spilling past spark.python.worker.memory (``worker/spill.py``): same results as plain PySpark
under the same setting, exact lineage through the merged runs, no spill files left behind."""

from __future__ import annotations

import math
import os
import random
from collections.abc import Iterator
from operator import add
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from capture_agent.record.storage.tables import ROW_GROUP_SETS
from capture_agent.record.worker.spill import BUCKETS, MEMORY_FACTOR_CONF, MemoryBudget, Runs
from tests.capture_agent.record.oracle import lines_with_offsets, positions_of, trace_back

pytestmark = pytest.mark.spark

LINES = 6000  # several memory checks (every 1000 positions) per partition


@pytest.fixture
def tiny_memory(sc: Any) -> Iterator[list[str]]:
    """spark.python.worker.memory=1m (every check finds the worker over it, as a huge partition
    would) for the test; yields the folders tasks spill to (Spark sets SPARK_LOCAL_DIRS for them)."""
    conf = sc._conf
    old = conf.get("spark.python.worker.memory", "512m")
    conf.set("spark.python.worker.memory", "1m")
    folders = sc.parallelize([0], 1).map(lambda _: os.environ.get("SPARK_LOCAL_DIRS", "/tmp")).collect()[0]
    try:
        yield folders.split(",")
    finally:
        conf.set("spark.python.worker.memory", old)


@pytest.fixture
def words(write_text: Any) -> str:
    rng = random.Random(9)
    vocabulary = [f"w{i}" for i in range(2500)]  # most words repeat, across runs too
    return write_text("words.txt", [" ".join(rng.choice(vocabulary) for _ in range(3)) for _ in range(LINES)])


def lines_with(path: str, word: str) -> set[tuple[str, int]]:
    return positions_of(path, lambda line: word in line.split())


def upstream(lc: Any, lin: Any, kind: str) -> str:
    """The first capture point of ``kind`` up the first-parent chain from a LineageRDD's point."""
    point = lc.store.point(lin.points()[0])
    while point.kind != kind:
        point = lc.store.point(point.parents[0])
    return str(point.capture_id)


def spilled(lc: Any, point_id: str) -> bool:
    """A task that spilled writes its table a bucket at a time: more row groups than its rows fill."""
    point = lc.store.point(point_id)
    for part in range(point.num_partitions):
        meta = pq.ParquetFile(point.table_path(part)).metadata
        if meta.num_row_groups > math.ceil(meta.num_rows / ROW_GROUP_SETS):
            return True
    return False


def leftover_files(folders: list[str] | Path) -> list[str]:
    """Spill files of ours left under the folders (``<dir>/python/<pid>/lineage-*``)."""
    roots = [str(folders)] if isinstance(folders, Path) else folders
    return [os.path.join(d, f) for root in roots for d, _, files in os.walk(root) for f in files
            if "/lineage-" in d]


def test_word_count_spills_and_traces_exactly(lc, sc, words, tiny_memory):
    counts = lc.textFile(words, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    result = counts.collect()
    plain = sc.textFile(words, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect()
    assert sorted(result) == sorted(plain)
    lin = counts.getLineage()
    reducer = upstream(lc, lin, "reducer")
    combiner = upstream(lc, lin, "combiner")
    assert spilled(lc, reducer) and spilled(lc, combiner)
    for word in ("w0", "w17", "w2499"):
        assert trace_back(lin.filter(lambda kv, w=word: kv[0] == w)) == lines_with(words, word), word
    src = lin.goBackAll().split()
    [source] = src.values()
    line = source.filter(lambda s: s.startswith("w1 ") or " w1 " in s).take(1)
    assert line
    forward = {w for w, _ in source.filter(lambda s, x=line[0]: s == x).goNextAll().collect()}
    assert forward == set(line[0].split())
    assert leftover_files(tiny_memory) == []


def test_distinct_spills_and_traces_exactly(lc, sc, words, tiny_memory):
    unique = lc.textFile(words, 2).flatMap(str.split).distinct(3)
    assert sorted(unique.collect()) == sorted(sc.textFile(words, 2).flatMap(str.split).distinct(3).collect())
    lin = unique.getLineage()
    assert spilled(lc, upstream(lc, lin, "reducer"))
    assert trace_back(lin.filter(lambda w: w == "w5")) == lines_with(words, "w5")


def test_group_by_key_spills_and_traces_exactly(lc, sc, words, tiny_memory):
    grouped = lc.textFile(words, 2).map(lambda s: (s.split()[0], s)).groupByKey()
    result = {k: sorted(v) for k, v in grouped.collect()}
    plain = {k: sorted(v) for k, v in sc.textFile(words, 2).map(lambda s: (s.split()[0], s)).groupByKey().collect()}
    assert result == plain
    lin = grouped.getLineage()
    assert spilled(lc, upstream(lc, lin, "reducer"))
    expected = positions_of(words, lambda line: line.split()[0] == "w3")
    assert trace_back(lin.filter(lambda kv: kv[0] == "w3")) == expected
    assert leftover_files(tiny_memory) == []


@pytest.mark.parametrize("how", ["join", "leftOuterJoin", "fullOuterJoin", "cogroup", "subtractByKey"])
def test_joins_spill_and_trace_each_side(lc, sc, words, write_text, tiny_memory, how):
    rng = random.Random(4)
    people = write_text("people.csv", [f"w{i},{rng.randint(0, 99)}" for i in range(0, 3000, 2)])

    def sides(ctx: Any) -> tuple[Any, Any]:
        left = ctx.textFile(words, 3).map(lambda s: (s.split()[1], len(s)))
        right = ctx.textFile(people, 2).map(lambda s: s.split(",")).map(lambda f: (f[0], int(f[1])))
        return left, right

    def normal(records: list[Any]) -> list[Any]:
        if how == "cogroup":
            return sorted((k, (sorted(a), sorted(b))) for k, (a, b) in records)
        return sorted(records, key=repr)

    left, right = sides(lc)
    joined = getattr(left, how)(right)
    plain_left, plain_right = sides(sc)
    assert normal(joined.collect()) == normal(getattr(plain_left, how)(plain_right).collect())
    lin = joined.getLineage()
    assert spilled(lc, upstream(lc, lin, "join" if "join" in how.lower() else "reducer"))
    # the first record of each partition is in its first run (the first check spills it)
    firsts = sc.textFile(words, 3).mapPartitions(lambda it: [next(iter(it)).split()[1]]).collect()
    for key in ("w8", "w1", "w1500", "w2999", *firsts):  # with and without a person, in every partition
        traced: dict[str, set[int]] = {}
        for part in lin.filter(lambda kv, k=key: kv[0] == k).goBackAll().split().values():
            for path, offset in part.positions():
                traced.setdefault(path.rsplit("/", 1)[1], set()).add(offset)
        person = {o for o, line in lines_with_offsets(people) if line.split(",")[0] == key}
        expected = {"words.txt": {o for o, line in lines_with_offsets(words) if line.split()[1] == key},
                    "people.csv": person}
        if how == "join" and not person:
            expected = {}
        if how == "subtractByKey":
            expected = {} if person else {"words.txt": expected["words.txt"]}
        assert traced == {k: v for k, v in expected.items() if v}, key
    assert leftover_files(tiny_memory) == []


def test_runs_merge_by_key_in_run_order_and_leave_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    runs = Runs(MemoryBudget(0))
    runs.spill([("a", ([1], [10])), ("b", ([2], [20]))])
    runs.spill([("a", ([3], [30])), ("c", ([4], [40]))])
    assert runs.count == 2 and len(leftover_files(tmp_path)) == 2 * BUCKETS

    def merge(x: Any, y: Any) -> Any:
        return x[0] + y[0], x[1] + y[1]

    merged: dict[str, Any] = {}
    for keys, values, ids in runs.merged(merge):
        assert ids is None  # spilled without ids
        assert not set(keys) & set(merged)  # a key lives in one bucket
        merged.update(zip(keys, values, strict=True))
    assert merged == {"a": ([1, 3], [10, 30]), "b": ([2], [20]), "c": ([4], [40])}
    assert leftover_files(tmp_path) == []


def test_runs_with_ids_merge_each_keys_ids_in_run_order(tmp_path, monkeypatch):
    """Keys repeated across runs: values merged by the merge function, each key's ids (in each id
    column, where some keys have none) the concatenation of its lists in run order, every key in
    one bucket; nothing left on disk."""
    monkeypatch.setenv("SPARK_LOCAL_DIRS", str(tmp_path))
    rng = random.Random(3)
    runs = Runs(MemoryBudget(0))
    expected_values: dict[str, int] = {}
    expected_ids: dict[str, tuple[list[int], list[int]]] = {}
    next_id = 0
    for _ in range(4):
        keys = rng.sample([f"k{i}" for i in range(300)], 200)  # most keys in several runs
        values: list[int] = []
        columns: tuple[list[list[int]], list[list[int]]] = ([], [])
        for key in keys:
            ids = list(range(next_id, next_id + rng.randint(1, 3)))
            next_id += len(ids)
            odd = [-i for i in ids] if int(key[1:]) % 2 else []  # the second column: odd keys only
            values.append(len(ids))
            columns[0].append(ids)
            columns[1].append(odd)
            expected_values[key] = expected_values.get(key, 0) + len(ids)
            expected = expected_ids.setdefault(key, ([], []))
            expected[0].extend(ids)
            expected[1].extend(odd)
        runs.spill(zip(keys, values, strict=True), [pa.array(c, pa.list_(pa.int64())) for c in columns])
    assert len(leftover_files(tmp_path)) == 4 * (BUCKETS + 1)  # the pickles and one ids file per run

    merged_values: dict[str, int] = {}
    merged_ids: dict[str, tuple[list[int], list[int]]] = {}
    for keys, values, lists in runs.merged(add):
        assert lists is not None and len(keys) == len(values) == len(lists[0]) == len(lists[1])
        assert not set(keys) & set(merged_values)
        merged_values.update(zip(keys, values, strict=True))
        merged_ids.update(zip(keys, zip(lists[0].to_pylist(), lists[1].to_pylist(), strict=True), strict=True))
    assert merged_values == expected_values
    assert merged_ids == expected_ids  # ids were numbered in run order: each list is sorted
    assert leftover_files(tmp_path) == []


def test_take_from_spilled_reducers_leaves_their_tables_whole(lc, words, tiny_memory):
    """A spilled reducer yields records before its table is written: take() must not stop it early."""
    counts = lc.textFile(words, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    grouped = lc.textFile(words, 2).map(lambda s: (s.split()[0], s)).groupByKey()
    first = counts.take(2)
    assert first and grouped.take(1)
    lin = counts.getLineage()
    for record_id, (word, _) in zip(lin.ids(), first, strict=True):
        assert trace_back(lc.lineage(lin.points()[0], [record_id])) == lines_with(words, word), word
    [(key, _)] = grouped.getLineage().collect()
    assert trace_back(grouped.getLineage()) == positions_of(words, lambda line: line.split()[0] == key)


@pytest.mark.parametrize(("factor", "budget"), [(None, 768.0), ("1.0", 512.0), ("2", 1024.0)])
def test_a_captured_task_may_use_the_setting_times_the_lineage_allowance(lc, sc, factor, budget):
    conf = sc._conf
    assert conf.get(MEMORY_FACTOR_CONF, None) is None  # the default applies
    if factor is not None:
        conf.set(MEMORY_FACTOR_CONF, factor)
    try:
        assert lc.compiler.worker_memory_mb == budget  # spark.python.worker.memory is 512m here
    finally:
        conf._jconf.remove(MEMORY_FACTOR_CONF)


def test_an_allowance_below_one_is_refused(lc, sc):
    conf = sc._conf
    conf.set(MEMORY_FACTOR_CONF, "0.5")
    try:
        with pytest.raises(ValueError, match="memoryFactor must be 1.0 or more"):
            _ = lc.compiler.worker_memory_mb
    finally:
        conf._jconf.remove(MEMORY_FACTOR_CONF)
