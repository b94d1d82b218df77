"""Inputs (text folders and globs, parallelize, Parquet, CSV), narrow operators fused into stages,
mapPartitions and sampling, and the changed-input check."""

from __future__ import annotations

import os
import time
from operator import add

import pytest

from capture_agent.record import InputChangedError
from tests.capture_agent.record.oracle import as_local, positions_of, trace_back

pytestmark = pytest.mark.spark


def test_folder_and_glob_inputs_trace_into_the_right_file(lc, sc, write_text, tmp_path):
    first = write_text("logs/day1.log", ["INFO start", "ERROR disk", "INFO stop"])
    second = write_text("logs/day2.log", ["ERROR net", "INFO ok"])
    for name in (str(tmp_path / "logs"), str(tmp_path / "logs" / "*.log"), f"{first},{second}"):
        errors = lc.textFile(name).filter(lambda s: s.startswith("ERROR"))
        assert errors.collect() == sc.textFile(name).filter(lambda s: s.startswith("ERROR")).collect()
        lin = errors.getLineage()
        assert trace_back(lin.filter(lambda s: s == "ERROR net")) == positions_of(second, lambda s: s == "ERROR net")
        expected = positions_of(first, lambda s: "ERROR" in s) | positions_of(second, lambda s: "ERROR" in s)
        assert trace_back(lin) == expected


def test_narrow_operators_are_fused_and_traced(lc, sc, write_text):
    path = write_text("kv.txt", ["a 1 2", "b 3", "a 4 5 6", "c", "b 7"])
    def build(ctx):
        return (ctx.textFile(path, 2).map(str.split).filter(lambda f: len(f) > 1)
                .keyBy(lambda f: f[0]).mapValues(lambda f: f[1:]).flatMapValues(lambda xs: xs)
                .mapValues(int).filter(lambda kv: kv[1] != 4))
    out = build(lc)
    assert out.collect() == build(sc).collect()
    kinds = [p.kind for p in lc.capture_points()]
    assert kinds == ["input", "output"]  # the whole chain is one stage: nothing per operator
    lin = out.getLineage()
    assert trace_back(lin.filter(lambda kv: kv == ("a", 6))) == positions_of(path, lambda s: s == "a 4 5 6")
    assert sorted(lin.goBackAll().filter(lambda s: s.startswith("b")).goNextAll().collect()) == [("b", 3), ("b", 7)]


def test_bytes_lines_with_use_unicode_false(lc, sc, write_text):
    path = write_text("u.txt", ["héllo", "wörld"])
    assert lc.textFile(path, use_unicode=False).collect() == sc.textFile(path, use_unicode=False).collect()


def test_parallelize_keeps_values_for_traces(lc, sc):
    data = [(f"k{i % 3}", i) for i in range(12)]
    sums = lc.parallelize(data, 3).reduceByKey(add)
    assert sums.collect() == sc.parallelize(data, 3).reduceByKey(add).collect()
    src = sums.getLineage().filter(lambda kv: kv[0] == "k1").goBackAll()
    assert src.collect() == [kv for kv in data if kv[0] == "k1"]
    assert [p.source for p in src.positions()] == [src.points()[0]] * 4
    assert lc.lineage(src.points()[0]).count() == 12


def test_parallelize_range_and_empty(lc, sc):
    squares = lc.parallelize(range(10), 3).map(lambda x: x * x)
    assert squares.collect() == sc.parallelize(range(10), 3).map(lambda x: x * x).collect()
    assert squares.getLineage().filter(lambda v: v == 49).goBackAll().collect() == [7]
    assert lc.parallelize([], 2).collect() == []


def test_map_partitions_and_glom(lc, sc):
    data = list(range(20))
    plain = sc.parallelize(data, 4)
    rdd = lc.parallelize(data, 4)
    sums = rdd.mapPartitions(lambda it: [sum(it)])
    assert sums.collect() == plain.mapPartitions(lambda it: [sum(it)]).collect()
    second_partition = sums.getLineage().filter(lambda s: s == sum(range(5, 10))).goBackAll()
    assert sorted(second_partition.collect()) == list(range(5, 10))
    doubled = rdd.mapPartitionsWithIndex(lambda i, it: ((i, x * 2) for x in it))
    assert doubled.collect() == plain.mapPartitionsWithIndex(lambda i, it: ((i, x * 2) for x in it)).collect()
    assert doubled.getLineage().filter(lambda p: p[1] == 26).goBackAll().collect() == [13]
    assert rdd.glom().collect() == plain.glom().collect()


def test_sample_zip_with_index_and_unique_id(lc, sc):
    data = list(range(100))
    rdd, plain = lc.parallelize(data, 4), sc.parallelize(data, 4)
    for with_replacement in (False, True):
        sample = rdd.sample(with_replacement, 0.3, 7)
        assert sample.collect() == plain.sample(with_replacement, 0.3, 7).collect()
        picked = sample.collect()[0]
        assert set(sample.getLineage().filter(lambda v, p=picked: v == p).goBackAll().collect()) == {picked}
    assert rdd.zipWithIndex().collect() == plain.zipWithIndex().collect()
    assert rdd.zipWithUniqueId().collect() == plain.zipWithUniqueId().collect()
    indexed = rdd.map(lambda x: x + 1000).zipWithIndex()
    indexed.collect()
    assert indexed.getLineage().filter(lambda p: p[1] == 42).goBackAll().collect() == [42]


def test_parquet_input_rows_trace_to_file_and_row_index(lc, spark, tmp_path):
    path = str(tmp_path / "people data.parquet")  # a space: Spark lists the files as URIs, %20
    rows = [(i, f"name{i}", i % 3) for i in range(30)]
    spark.createDataFrame(rows, ["id", "name", "grp"]).repartition(3).write.parquet(path)
    people = lc.parquet(path)
    plain = spark.read.parquet(path).rdd
    assert people.getNumPartitions() == plain.getNumPartitions()
    assert people.collect() == plain.collect()
    per_group = people.map(lambda r: (r.grp, 1)).reduceByKey(add)
    assert sorted(per_group.collect()) == [(0, 10), (1, 10), (2, 10)]
    src = per_group.getLineage().filter(lambda kv: kv[0] == 1).goBackAll()
    assert sorted(r.id for r in src.collect()) == [i for i in range(30) if i % 3 == 1]
    assert all(r.grp == 1 for r in src.collect())
    positions = src.positions()
    assert all(p.source.endswith(".parquet") for p in positions)
    import pyarrow.parquet as pq

    for (source, row_index), row in zip(positions, src.collect(), strict=True):
        file_rows = pq.read_table(source.replace("file:", "")).to_pylist()
        assert file_rows[row_index]["id"] == row.id


def test_csv_input_with_header(lc, spark, write_text):
    path = write_text("t.csv", ["id,city", "1,paris", "2,", "3,rome", "4,paris"])
    cities = lc.csv(path, header=True)
    assert sorted(cities.collect()) == sorted(spark.read.csv(path, header=True).rdd.collect())
    counts = cities.map(lambda r: (r.city, 1)).reduceByKey(add)
    assert sorted(counts.collect(), key=str) == [("paris", 2), ("rome", 1), (None, 1)]
    assert trace_back(counts.getLineage().filter(lambda kv: kv[0] == "paris")) == positions_of(
        path, lambda s: s.endswith(",paris"))
    src = counts.getLineage().filter(lambda kv: kv[0] is None).goBackAll()
    assert [r.id for r in src.collect()] == ["2"]


def test_trace_over_a_changed_input_says_so(lc, write_text):
    path = write_text("changing.txt", ["alpha", "beta"])
    kept = lc.textFile(path).filter(lambda s: s == "beta")
    assert kept.collect() == ["beta"]
    src = kept.getLineage().goBackAll()
    assert src.collect() == ["beta"]
    time.sleep(0.01)
    with open(path, "w") as f:
        f.write("gamma\nbeta\nalpha\n")
    os.utime(path, (time.time() + 5, time.time() + 5))
    with pytest.raises(InputChangedError, match="changed since lineage was captured"):
        kept.getLineage().goBackAll().collect()
    assert as_local(src.positions())  # ids and positions need no file access


def test_map_partitions_buffering_and_whole_partition_lineage(lc, sc):
    data = [5, 1, 4, 2, 8, 6]
    rdd = lc.parallelize(data, 2)  # partitions [5, 1, 4] and [2, 8, 6]
    ordered = rdd.mapPartitions(lambda it: iter(sorted(it)))
    assert ordered.collect() == sc.parallelize(data, 2).mapPartitions(lambda it: iter(sorted(it))).collect()
    # a buffering function: every output of a partition may come from any input of it
    assert sorted(ordered.getLineage().filter(lambda v: v == 5).goBackAll().collect()) == [1, 4, 5]
    running = rdd.mapPartitions(lambda it: _running_sums(it), lineage="partition")
    assert running.collect() == [5, 6, 10, 2, 10, 16]
    lin = running.getLineage()
    assert sorted(lin.filter(lambda v: v == 10).goBackAll().collect()) == [1, 2, 4, 5, 6, 8]
    assert sorted(lin.goBackAll().filter(lambda v: v == 8).goNextAll().collect()) == [2, 10, 16]
    with pytest.raises(ValueError, match="lineage"):
        rdd.mapPartitions(list, lineage="guess")


def _running_sums(iterator):
    total = 0
    for x in iterator:
        total += x
        yield total


def test_random_split_sample_by_key_pipe_and_sorted_repartition(lc, sc):
    data = [(i % 3, i) for i in range(60)]
    rdd, plain = lc.parallelize(data, 3), sc.parallelize(data, 3)
    for part, expected in zip(rdd.randomSplit([1, 2], 5), plain.randomSplit([1, 2], 5), strict=True):
        assert part.collect() == expected.collect()
        value = part.collect()[0]
        assert part.getLineage().filter(lambda v, x=value: v == x).goBackAll().collect() == [value]
    fractions = {0: 0.5, 1: 0.2, 2: 1.0}
    for replace in (False, True):
        by_key = rdd.sampleByKey(replace, fractions, 3)
        assert by_key.collect() == plain.sampleByKey(replace, fractions, 3).collect()
    piped = rdd.map(lambda kv: kv[1]).pipe("cat")
    assert piped.collect() == plain.map(lambda kv: kv[1]).pipe("cat").collect()
    assert sorted(piped.getLineage().filter(lambda s: s == "0").goBackAll().collect()) == sorted(data[:20])
    sorted_parts = rdd.repartitionAndSortWithinPartitions(2, lambda k: k, False)
    expected = plain.repartitionAndSortWithinPartitions(2, lambda k: k, False)
    assert sorted_parts.glom().collect() == expected.glom().collect()
    moved = rdd.repartitionAndSortWithinPartitions(2)
    moved.collect()
    assert moved.getLineage().filter(lambda kv: kv == (2, 5)).goBackAll().collect() == [(2, 5)]
    assert not rdd.isCheckpointed() and rdd.getCheckpointFile() is None
