"""Actions: results equal PySpark's and their output capture points trace back correctly;
saveAsTextFile output ids are (part file, byte offset); a cached RDD keeps one lineage."""

from __future__ import annotations

import os
from operator import add

import pytest

from tests.capture_agent.record.oracle import as_local, lines_with_offsets, positions_of, trace_back

pytestmark = pytest.mark.spark

LINES = ["3 a", "1 b", "4 a", "1 c", "5 b", "9 a", "2 c", "6 d"]


@pytest.fixture
def numbers(write_text):
    return write_text("numbers.txt", LINES)


def parsed(ctx, path):
    return ctx.textFile(path, 3).map(str.split).map(lambda f: (f[1], int(f[0])))


def test_aggregate_actions_equal_pyspark_and_trace_to_every_input(lc, sc, numbers):
    nums = parsed(lc, numbers).values()
    plain = parsed(sc, numbers).values()
    every_line = positions_of(numbers, lambda s: True)
    for name, call in [("reduce", lambda r: r.reduce(add)), ("fold", lambda r: r.fold(0, add)),
                       ("sum", lambda r: r.sum()), ("max", lambda r: r.max()), ("min", lambda r: r.min()),
                       ("aggregate", lambda r: r.aggregate((0, 0), lambda a, x: (a[0] + x, a[1] + 1),
                                                          lambda a, b: (a[0] + b[0], a[1] + b[1]))),
                       ("mean", lambda r: r.mean()), ("treeReduce", lambda r: r.treeReduce(add))]:
        assert call(nums) == call(plain), name
        lin = nums.getLineage()
        assert lin.collect() == [call(plain)], name
        assert trace_back(lin) == every_line, name
    odd = nums.filter(lambda n: n % 2)
    assert odd.count() == plain.filter(lambda n: n % 2).count()
    assert trace_back(odd.getLineage()) == positions_of(numbers, lambda s: int(s.split()[0]) % 2)


def test_count_by_key_and_value(lc, sc, numbers):
    pairs = parsed(lc, numbers)
    by_key = pairs.countByKey()
    assert by_key == parsed(sc, numbers).countByKey()
    assert list(by_key) == list(parsed(sc, numbers).countByKey())
    lin = pairs.getLineage()
    assert trace_back(lin.filter(lambda kv: kv[0] == "a")) == positions_of(numbers, lambda s: s.endswith(" a"))
    assert sorted(lin.collect()) == sorted(by_key.items())
    keys = pairs.keys()
    by_value = keys.countByValue()
    assert by_value == parsed(sc, numbers).keys().countByValue()
    assert trace_back(keys.getLineage().filter(lambda kv: kv[0] == "d")) == positions_of(
        numbers, lambda s: s.endswith(" d"))


def test_top_take_ordered_collect_as_map_lookup(lc, sc, numbers):
    nums = parsed(lc, numbers)
    plain = parsed(sc, numbers)
    values = nums.values()
    assert values.top(3) == plain.values().top(3)
    lin = values.getLineage()
    assert lin.collect() == [9, 6, 5]
    assert trace_back(lin.filter(lambda n: n == 9)) == positions_of(numbers, lambda s: s == "9 a")
    assert nums.takeOrdered(2, key=lambda kv: kv[1]) == plain.takeOrdered(2, key=lambda kv: kv[1])
    assert trace_back(nums.getLineage()) == positions_of(numbers, lambda s: s.startswith("1 "))
    assert nums.collectAsMap() == plain.collectAsMap()
    assert nums.lookup("c") == plain.lookup("c")


def test_foreach_and_grouped_values(lc, sc, numbers):
    nums = parsed(lc, numbers)
    nums.foreach(lambda kv: None)
    assert trace_back(nums.getLineage()) == positions_of(numbers, lambda s: True)
    grouped = nums.groupBy(lambda kv: kv[1] % 2)
    plain = parsed(sc, numbers).groupBy(lambda kv: kv[1] % 2)
    assert [(k, sorted(v)) for k, v in grouped.collect()] == [(k, sorted(v)) for k, v in plain.collect()]
    evens = grouped.getLineage().filter(lambda kv: kv[0] == 0)
    assert trace_back(evens) == positions_of(numbers, lambda s: int(s.split()[0]) % 2 == 0)
    agg = nums.aggregateByKey(0, lambda a, v: a + v, add)
    assert agg.collect() == parsed(sc, numbers).aggregateByKey(0, lambda a, v: a + v, add).collect()
    folded = nums.foldByKey(0, add)
    assert folded.collect() == parsed(sc, numbers).foldByKey(0, add).collect()
    assert trace_back(folded.getLineage().filter(lambda kv: kv[0] == "b")) == positions_of(
        numbers, lambda s: s.endswith(" b"))
    combined = nums.combineByKey(lambda v: [v], lambda c, v: c + [v], lambda a, b: a + b)
    assert combined.collect() == parsed(sc, numbers).combineByKey(
        lambda v: [v], lambda c, v: c + [v], lambda a, b: a + b).collect()


def test_save_as_text_file_ids_are_part_file_offsets_and_chain_to_the_next_job(lc, sc, numbers, tmp_path):
    out = str(tmp_path / "out")
    totals = parsed(lc, numbers).reduceByKey(add).map(lambda kv: f"{kv[0]}\t{kv[1]}")
    totals.saveAsTextFile(out)
    saved = sorted(sc.textFile(out).collect())
    assert saved == sorted(parsed(sc, numbers).reduceByKey(add).map(lambda kv: f"{kv[0]}\t{kv[1]}").collect())
    lin = totals.getLineage()
    assert sorted(lin.collect()) == saved
    # each output id names its part file and the byte offset of its line
    for (path, offset), line in zip(sorted(as_local(lin.positions())), [None] * lin.count(), strict=True):
        assert os.path.basename(path).startswith("part-") and line is None
        assert dict(lines_with_offsets(path))[offset].split("\t")[0] in "abcd"
    a_line = lin.filter(lambda s: s.startswith("a\t"))
    assert trace_back(a_line) == positions_of(numbers, lambda s: s.endswith(" a"))
    # a later job reading the output: its input positions are the saved records' positions, and
    # its lineage chains through the saved records into the first job
    again = lc.textFile(out).filter(lambda s: s.startswith("a\t"))
    assert again.collect() == ["a\t16"]
    later = again.getLineage()
    read_back = later.goBack()
    assert [lc.store.point(c).kind for c in read_back.points()] == ["input"]
    assert as_local(read_back.positions()) == as_local(a_line.positions())
    assert [lc.store.point(c).op for c in read_back.goBack().points()] == ["saveAsTextFile"]
    assert trace_back(later) == positions_of(numbers, lambda s: s.endswith(" a"))
    first_job_input = later.goBackAll().filter(lambda s: s == "9 a")
    assert first_job_input.goNextAll().collect() == ["a\t16"]
    assert lc.lineage(first_job_input.points()[0], first_job_input.ids()).goNextAll().points() == later.points()


def test_cached_rdd_reused_by_two_actions_keeps_one_lineage(lc, numbers):
    totals = parsed(lc, numbers).reduceByKey(add).cache()
    first = totals.collect()
    second = totals.filter(lambda kv: kv[1] > 5).collect()
    assert sorted(second) == sorted(kv for kv in first if kv[1] > 5)
    reducers = [p for p in lc.capture_points() if p.kind == "reducer"]
    assert len(reducers) == 1  # both actions read the same cached records and their lineage
    outputs = [p for p in lc.capture_points() if p.kind == "output"]
    assert [p.parents for p in outputs] == [[reducers[0].capture_id]] * 2
    lin = totals.getLineage().filter(lambda kv: kv[0] == "a")
    assert trace_back(lin) == positions_of(numbers, lambda s: s.endswith(" a"))
    # forward from an "a" line reaches the a-record of the last action only (the traced one)
    assert lin.goBackAll().goNextAll().collect() == [("a", 16)]


def test_cached_narrow_rdd_is_a_stage_capture_point(lc, numbers):
    words = lc.textFile(numbers, 2).flatMap(str.split).cache()
    assert words.count() == 16
    letters = words.filter(str.isalpha)
    assert sorted(letters.collect()) == sorted("abacbacd")
    kinds = [p.kind for p in lc.capture_points()]
    assert kinds.count("stage") == 1
    lin = letters.getLineage().filter(lambda s: s == "d")
    assert trace_back(lin) == positions_of(numbers, lambda s: s == "6 d")
    assert len(lin.goBack().points()) == 1 and lc.store.point(lin.goBack().points()[0]).kind == "stage"


def test_reduce_by_key_locally_and_to_local_iterator(lc, sc, numbers):
    pairs = parsed(lc, numbers)
    assert pairs.reduceByKeyLocally(add) == parsed(sc, numbers).reduceByKeyLocally(add)
    assert trace_back(pairs.getLineage().filter(lambda kv: kv == ("c", 3))) == positions_of(
        numbers, lambda s: s.endswith(" c"))
    assert list(pairs.toLocalIterator()) == list(parsed(sc, numbers).toLocalIterator())
    plan = pairs.reduceByKey(add).toDebugString().decode()
    assert "reduceByKey" in plan and "textFile" in plan


def test_lineage_disabled_gives_plain_rdds(spark, numbers, tmp_path, monkeypatch):
    from pyspark.core.rdd import RDD

    from capture_agent.record import LineageContext

    monkeypatch.setenv("LINEAGE_DISABLED", "true")
    off = LineageContext(spark, store=str(tmp_path / "off"))
    rdd = off.textFile(numbers)
    assert isinstance(rdd, RDD) and rdd.count() == len(LINES)
    assert not os.path.exists(tmp_path / "off")


def test_text_saved_in_the_stage_that_reads_it(lc, sc, numbers, tmp_path):
    """textFile -> filter -> saveAsTextFile in one stage: the input's line offsets and the saved
    lines' offsets are kept apart (they once shared a variable of the generated stage)."""
    out = str(tmp_path / "odd")
    odd = lc.textFile(numbers, 3).filter(lambda s: int(s.split()[0]) % 2)
    odd.saveAsTextFile(out)
    assert sorted(sc.textFile(out).collect()) == sorted(s for s in LINES if int(s.split()[0]) % 2)
    assert trace_back(odd.getLineage()) == positions_of(numbers, lambda s: int(s.split()[0]) % 2)
