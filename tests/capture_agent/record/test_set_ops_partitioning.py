"""union, distinct, subtract, intersection, cartesian, sorting, repartitioning, empty partitions,
skewed keys: results equal PySpark's and traces equal the oracle."""

from __future__ import annotations

from operator import add

import pytest

from tests.capture_agent.record.oracle import lines_with_offsets, positions_of, trace_back

pytestmark = pytest.mark.spark


@pytest.fixture
def two_files(write_text):
    a = write_text("a.txt", ["apple", "banana", "cherry", "apple", "date"])
    b = write_text("b.txt", ["banana", "elder", "fig", "apple"])
    return a, b


def test_union_of_two_inputs_traces_into_both_files(lc, sc, two_files):
    a, b = two_files
    union = lc.textFile(a, 2).union(lc.textFile(b, 2))
    counts = union.map(lambda w: (w, 1)).reduceByKey(add)
    plain = sc.textFile(a, 2).union(sc.textFile(b, 2)).map(lambda w: (w, 1)).reduceByKey(add)
    assert counts.collect() == plain.collect()
    lin = counts.getLineage().filter(lambda kv: kv[0] == "apple")
    assert trace_back(lin) == positions_of(a, lambda s: s == "apple") | positions_of(b, lambda s: s == "apple")
    # one step back from the combiner lands on the union point, whose records are the lines
    at_union = lin.goBack().goBack().goBack()
    assert [lc.store.point(c).kind for c in at_union.points()] == ["union"]
    assert sorted(at_union.collect()) == ["apple", "apple", "apple"]
    # forward from "fig" in b reaches only ("fig", 1)
    src = lin.goBackAll().split()
    assert len(src) == 2
    b_point = [cid for cid in src if lc.store.point(cid).layout.source == b][0]
    assert src[b_point].goNextAll().collect() == [("apple", 3)]
    fig = counts.getLineage().filter(lambda kv: kv[0] == "fig").goBackAll()
    assert fig.collect() == ["fig"]
    assert fig.goNextAll().collect() == [("fig", 1)]


def test_union_then_narrow_ops_and_collect(lc, sc, two_files):
    a, b = two_files
    union = lc.textFile(a).map(str.upper).union(lc.textFile(b).filter(lambda s: "a" in s)).map(lambda s: s + "!")
    plain = sc.textFile(a).map(str.upper).union(sc.textFile(b).filter(lambda s: "a" in s)).map(lambda s: s + "!")
    assert union.collect() == plain.collect()
    lin = union.getLineage()
    assert trace_back(lin.filter(lambda s: s == "BANANA!")) == positions_of(a, lambda s: s == "banana")
    assert trace_back(lin.filter(lambda s: s == "banana!")) == positions_of(b, lambda s: s == "banana")


def test_distinct_traces_to_every_copy(lc, sc, two_files):
    a, _ = two_files
    d = lc.textFile(a, 2).distinct()
    assert sorted(d.collect()) == sorted(sc.textFile(a, 2).distinct().collect())
    assert d.collect() == sc.textFile(a, 2).distinct().collect()
    assert trace_back(d.getLineage().filter(lambda s: s == "apple")) == positions_of(a, lambda s: s == "apple")
    src = d.getLineage().goBackAll().filter(lambda s: s == "cherry")
    assert src.goNextAll().collect() == ["cherry"]


def test_subtract_and_intersection(lc, sc, two_files):
    a, b = two_files
    left, right = lc.textFile(a, 2), lc.textFile(b, 2)
    plain_left, plain_right = sc.textFile(a, 2), sc.textFile(b, 2)
    sub = left.subtract(right)
    assert sub.collect() == plain_left.subtract(plain_right).collect()
    assert sorted(sub.collect()) == ["cherry", "date"]
    assert trace_back(sub.getLineage().filter(lambda s: s == "cherry")) == positions_of(a, lambda s: s == "cherry")
    inter = left.intersection(right)
    assert inter.collect() == plain_left.intersection(plain_right).collect()
    expected = positions_of(a, lambda s: s == "apple") | positions_of(b, lambda s: s == "apple")
    assert trace_back(inter.getLineage().filter(lambda s: s == "apple")) == expected


def test_subtract_by_key_keeps_each_left_record(lc, sc):
    left = lc.parallelize([("a", 1), ("b", 2), ("a", 3), ("c", 4)], 2)
    right = lc.parallelize([("b", 0)], 1)
    out = left.subtractByKey(right)
    plain = sc.parallelize([("a", 1), ("b", 2), ("a", 3), ("c", 4)], 2).subtractByKey(sc.parallelize([("b", 0)], 1))
    assert out.collect() == plain.collect()
    lin = out.getLineage().filter(lambda kv: kv == ("a", 3))
    assert lin.goBackAll().collect() == [("a", 3)]


def test_cartesian_pairs_trace_to_one_record_each(lc, sc):
    xs, ys = lc.parallelize([1, 2, 3], 2), lc.parallelize(["x", "y"], 2)
    pairs = xs.cartesian(ys)
    assert pairs.collect() == sc.parallelize([1, 2, 3], 2).cartesian(sc.parallelize(["x", "y"], 2)).collect()
    src = pairs.getLineage().filter(lambda p: p == (2, "y")).goBackAll()
    assert sorted(map(str, src.collect())) == ["2", "y"]
    assert sorted(lc.lineage(src.points()[0]).filter(lambda v: v == 3).goNextAll().collect()) == [(3, "x"), (3, "y")]


def test_sort_by_key_and_sort_by(lc, sc, write_text):
    path = write_text("nums.txt", [str(n) for n in [5, 3, 9, 1, 7, 3, 8, 2, 6, 4]])
    nums = lc.textFile(path, 3).map(int)
    plain = sc.textFile(path, 3).map(int)
    by_key = nums.map(lambda n: (n % 4, n)).sortByKey()
    assert by_key.collect() == plain.map(lambda n: (n % 4, n)).sortByKey().collect()
    assert trace_back(by_key.getLineage().filter(lambda kv: kv == (1, 9))) == positions_of(path, lambda s: s == "9")
    desc = nums.sortBy(lambda n: -n, numPartitions=1)
    assert desc.collect() == plain.sortBy(lambda n: -n, numPartitions=1).collect()
    assert trace_back(desc.getLineage().filter(lambda n: n == 3)) == positions_of(path, lambda s: s == "3")
    down = nums.sortBy(lambda n: n, ascending=False, numPartitions=3)
    assert down.collect() == plain.sortBy(lambda n: n, ascending=False, numPartitions=3).collect()
    assert down.getNumPartitions() == 3


def test_repartition_coalesce_and_partition_by(lc, sc):
    data = list(range(40))
    rdd, plain = lc.parallelize(data, 4), sc.parallelize(data, 4)
    re = rdd.repartition(3)
    assert re.glom().collect() == plain.repartition(3).glom().collect()
    co = rdd.coalesce(2)
    assert co.glom().collect() == plain.coalesce(2).glom().collect()
    lin = co.getLineage()
    assert lin.goBackAll().count() == 40  # each glom record is a whole partition
    co_values = rdd.map(lambda x: x * 10).coalesce(2)
    assert co_values.collect() == plain.map(lambda x: x * 10).coalesce(2).collect()
    assert co_values.getLineage().filter(lambda v: v == 170).goBackAll().collect() == [17]
    parts = rdd.map(lambda x: (x % 5, x)).partitionBy(3)
    assert parts.glom().collect() == plain.map(lambda x: (x % 5, x)).partitionBy(3).glom().collect()
    assert parts.partitionBy(3) is parts
    moved = rdd.repartition(5).filter(lambda x: x % 7 == 0)
    assert sorted(moved.collect()) == [0, 7, 14, 21, 28, 35]
    assert moved.getLineage().filter(lambda v: v == 21).goBackAll().collect() == [21]


def test_empty_partitions_and_empty_results(lc, sc, write_text):
    path = write_text("sparse.txt", ["x"] + [""] * 30 + ["y"])
    lines = lc.textFile(path, 8)
    assert lines.getNumPartitions() == sc.textFile(path, 8).getNumPartitions()
    words = lines.flatMap(str.split)
    counts = words.map(lambda w: (w, 1)).reduceByKey(add, 6)
    plain = sc.textFile(path, 8).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 6)
    assert counts.collect() == plain.collect()
    assert trace_back(counts.getLineage().filter(lambda kv: kv[0] == "y")) == positions_of(path, lambda s: s == "y")
    none = lines.filter(lambda s: s == "nothing")
    assert none.collect() == []
    assert none.getLineage().count() == 0
    assert none.getLineage().goBackAll().collect() == []
    assert none.count() == 0
    assert none.getLineage().goBackAll().collect() == []
    assert lc.parallelize([], 3).map(lambda x: (x, 1)).reduceByKey(add).collect() == []
    assert lc.parallelize([], 2).isEmpty()


def test_skewed_key_holding_most_records(lc, sc, write_text):
    lines = ["hot"] * 300 + [f"cold{i}" for i in range(20)] + ["hot warm"] * 5
    path = write_text("skew.txt", lines)
    counts = lc.textFile(path, 4).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    assert counts.collect() == sc.textFile(path, 4).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect()
    lin = counts.getLineage()
    hot = lin.filter(lambda kv: kv[0] == "hot")
    assert hot.collect() == [("hot", 305)]
    assert trace_back(hot) == positions_of(path, lambda s: "hot" in s.split())
    assert trace_back(lin.filter(lambda kv: kv[0] == "cold7")) == positions_of(path, lambda s: s == "cold7")
    groups = lc.textFile(path, 4).map(lambda s: (s.split()[0], s)).groupByKey()
    plain_groups = sc.textFile(path, 4).map(lambda s: (s.split()[0], s)).groupByKey()
    assert [(k, list(v)) for k, v in groups.collect()] == [(k, list(v)) for k, v in plain_groups.collect()]
    traced = trace_back(groups.getLineage().filter(lambda kv: kv[0] == "hot"))
    assert traced == positions_of(path, lambda s: s.split()[0] == "hot")
    assert len(traced) == 305
    offsets = dict(lines_with_offsets(path))
    assert all(offsets[o].startswith("hot") for _, o in traced)
