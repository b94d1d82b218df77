"""Selective replay (``query.selective``): only the partitions a deletion touches are computed
again and merged with the map-side aggregates the others kept; checked against plain PySpark on
the input files written without the deleted lines, over random texts, partitionings, deletions and
combines; and it steps aside (None) when aggregates were not kept."""

from __future__ import annotations

import os
import random
from collections import Counter
from operator import add
from pathlib import Path

import pytest

from capture_agent.record import LineageContext
from capture_agent.record.query.replay_strategies import Restricted
from capture_agent.record.query.selective import aggregated_combines, selective_rerun
from capture_agent.record.query.stored_job import Build, StoredJob

pytestmark = pytest.mark.spark

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def combines():
    """(name, build the combine from (word, 1) pairs) pairs: every family selective replay covers."""
    return [
        ("reduceByKey", lambda pairs: pairs.reduceByKey(add, 3)),
        ("foldByKey", lambda pairs: pairs.foldByKey(0, add)),
        ("aggregateByKey", lambda pairs: pairs.aggregateByKey((0, 0), lambda acc, v: (acc[0] + v, acc[1] + 1),
                                                              lambda x, y: (x[0] + y[0], x[1] + y[1]), 2)),
        ("combineByKey", lambda pairs: pairs.combineByKey(lambda v: [v], lambda acc, v: acc + [v],
                                                          lambda x, y: x + y).mapValues(sorted)),
    ]


def selective(lc, sc, lineage, doomed, output):
    return selective_of(lc, sc, lineage.filter(doomed), output)


def selective_of(lc, sc, chosen, output):
    deleted = chosen.frontier()
    job = StoredJob.open(lc.store, sc)
    assert job is not None
    return selective_rerun(job, Build(job, deleted), output, deleted)


@pytest.mark.parametrize("seed", range(6))
def test_selective_replay_equals_a_plain_rerun_on_the_remaining_lines(spark, sc, tmp_path, write_text, seed):
    rng = random.Random(seed)
    lines = [" ".join(rng.choices(WORDS[: rng.randint(2, 8)], k=rng.randint(0, 5))) for _ in range(rng.randint(5, 60))]
    path = write_text(f"text-{seed}.txt", lines)
    lc = LineageContext(spark, store=str(tmp_path / f"store-{seed}"))
    name, combine = combines()[seed % 4]
    partitions = rng.randint(1, 4)
    source = lc.textFile(path, partitions)
    result = combine(source.flatMap(str.split).map(lambda w: (w, 1)))
    if name == "combineByKey":  # mapValues after the combine: not a shape selective replay takes
        result = source.flatMap(str.split).map(lambda w: (w, 1)).combineByKey(
            lambda v: [v], lambda acc, v: acc + [v], lambda x, y: x + y)
    result.collect()
    output = result.getLineage().points()[0]
    victim = rng.choice(WORDS)
    doomed = (lambda line: victim in line.split()) if seed % 2 else (lambda line: len(line) % 3 == 0)
    if not any(doomed(line) for line in lines):
        pytest.skip("nothing to delete in this draw")
    new = selective(lc, sc, source.getLineage(), doomed, output)
    assert new is not None, "the shape allows selective replay and every partition kept its aggregates"
    plain = result.plain().context
    rest = write_text(f"rest-{seed}.txt", [line for line in lines if not doomed(line)])
    again = combine(plain.textFile(rest, partitions).flatMap(str.split).map(lambda w: (w, 1)))
    if name == "combineByKey":
        again = plain.textFile(rest, partitions).flatMap(str.split).map(lambda w: (w, 1)).combineByKey(
            lambda v: [v], lambda acc, v: acc + [v], lambda x, y: x + y)
    normal = (lambda kv: (kv[0], sorted(kv[1]))) if name == "combineByKey" else (lambda kv: kv)
    assert Counter(repr(normal(kv)) for kv in new) == Counter(repr(normal(kv)) for kv in again.collect())


def test_a_whole_file_deleted_needs_only_the_kept_aggregates(spark, sc, tmp_path):
    from capture_agent.record.query.lineage_rdd import LineageRDD

    folder = tmp_path / "files"
    folder.mkdir()
    for n in range(4):
        (folder / f"part-{n}.txt").write_text("".join(f"w{(n * i) % 7} w{i % 3}\n" for i in range(50)))
    lc = LineageContext(spark, store=str(tmp_path / "store"))
    lines = lc.textFile(str(folder))
    counts = lines.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    counts.collect()
    lineage = lines.getLineage()
    first = [i for i, (p, _) in zip(lineage.ids(), lineage.positions(), strict=True) if p.endswith("part-0.txt")]
    doomed = LineageRDD.at_point(lc.lineage_session, lineage.points()[0], first)
    expected: Counter[str] = Counter()
    for n in range(1, 4):
        for i in range(50):
            expected.update([f"w{(n * i) % 7}", f"w{i % 3}"])
    assert Counter(dict(selective_of(lc, sc, doomed, counts.getLineage().points()[0]))) == expected
    impact = doomed.whatIfDeleted()  # the what-if takes the same path
    assert dict(impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()) == dict(expected)


def test_without_kept_aggregates_selective_replay_steps_aside(spark, sc, tmp_path, write_text, monkeypatch):
    monkeypatch.setenv("LINEAGE_KEEP_AGGREGATES", "0")
    path = write_text("words.txt", ["a b", "b c", "c d"])
    lc = LineageContext(spark, store=str(tmp_path / "store"))
    source = lc.textFile(path, 2)
    counts = source.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)
    counts.collect()
    assert selective(lc, sc, source.getLineage(), lambda line: "a" in line, counts.getLineage().points()[0]) is None
    impact = source.getLineage().filter(lambda line: "a" in line).whatIfDeleted()
    assert impact.deleted() == [("a", 1)]  # the whole job reran


@pytest.mark.parametrize("seed", range(4))
def test_sums_of_ints_subtract_the_deleted_records_alone(spark, sc, tmp_path, write_text, seed, monkeypatch):
    """reduceByKey(add) of ints: old sums less the deleted lines' pairs; keys lineage says die are
    gone, even where a key's remaining values sum to zero (+1 and -1 here)."""
    from capture_agent.record.query import selective as module

    def no_kept_aggregates(*_):
        raise AssertionError("the subtraction needs no kept aggregates")

    monkeypatch.setattr(module, "_kept_aggregates", no_kept_aggregates)
    rng = random.Random(100 + seed)
    lines = [" ".join(rng.choices(WORDS[:5], k=rng.randint(1, 4))) for _ in range(rng.randint(10, 50))]
    path = write_text(f"signed-{seed}.txt", lines)
    lc = LineageContext(spark, store=str(tmp_path / f"store-{seed}"))

    def sums(ctx, p):
        return ctx.textFile(p, 3).flatMap(lambda line: [(w, 1 if i % 2 else -1) for i, w in enumerate(line.split())]) \
            .reduceByKey(add, 2)

    source = lc.textFile(path, 3)
    result = source.flatMap(lambda line: [(w, 1 if i % 2 else -1) for i, w in enumerate(line.split())]) \
        .reduceByKey(add, 2)
    result.collect()
    victim = rng.choice(WORDS[:5])
    chosen = source.getLineage().filter(lambda line: victim in line.split())
    impact = chosen.whatIfDeleted()
    deleted = chosen.frontier()
    job = StoredJob.open(lc.store, sc)
    assert job is not None
    job.values = lc.lineage_session.values
    dead = impact.deleted_ids()
    new = selective_rerun(job, Build(job, deleted), result.getLineage().points()[0], deleted, dead)
    assert new is not None
    rest = write_text(f"signed-rest-{seed}.txt", [line for line in lines if victim not in line.split()])
    again = sums(sc, rest).collect()
    assert Counter(new) == Counter(again)
    assert Counter(impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()) == Counter(again)


def later_stages():
    """(name, the job after its word count (word, n) pairs, given the topic table's (word, topic)
    pairs): stages that join, group or combine again on what the count computed."""
    return [
        ("words by count", lambda counts, topics: counts.map(lambda kv: (kv[1], kv[0])).groupByKey()
         .mapValues(sorted)),
        ("topic totals", lambda counts, topics: counts.join(topics).map(lambda kv: (kv[1][1], kv[1][0]))
         .reduceByKey(add)),
        ("count of counts", lambda counts, topics: counts.map(lambda kv: (kv[1], 1)).reduceByKey(add)),
        ("outer join", lambda counts, topics: counts.fullOuterJoin(topics).mapValues(repr).distinct()),
    ]


@pytest.mark.parametrize("seed", range(4))
def test_later_stages_run_on_the_kept_aggregates_never_on_the_untouched_input(spark, sc, tmp_path, seed):
    """A what-if on a job that joins, groups or combines again after its word count: the count's
    untouched partitions come from their kept aggregates (and its later stages run on the keys the
    deletion touches only). To prove it, an untouched input file is overwritten after capture with
    other words of the same size and modification time: a replay that read it would not match the
    answer computed from the original files."""
    rng = random.Random(200 + seed)
    folder = tmp_path / f"files-{seed}"
    folder.mkdir()
    # each file has a word of its own (only0, only1, only2) besides the shared ones
    texts = [[" ".join(rng.choices(WORDS, k=rng.randint(1, 4)) + [f"only{n}"] * (rng.random() < 0.4))
              for _ in range(rng.randint(5, 25))] for n in range(3)]
    for n, file_lines in enumerate(texts):
        (folder / f"part-{n}.txt").write_text("".join(line + "\n" for line in file_lines))
    topics = write_topics(tmp_path / f"topics-{seed}.txt", rng)
    name, later = later_stages()[seed]
    lc = LineageContext(spark, store=str(tmp_path / f"store-{seed}"))
    lines = lc.textFile(str(folder))
    counts = lines.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    table = lc.textFile(topics, 2).map(lambda line: tuple(line.split(",")))
    result = later(counts, table)
    result.collect()
    victim = f"only{rng.randrange(3)}"
    doomed = lines.getLineage().filter(lambda line: victim in line.split())
    touched = {p.source for p in doomed.positions()}
    untouched = sorted(str(p) for p in folder.iterdir() if f"file:{p}" not in touched and str(p) not in touched)
    if not doomed.ids() or not untouched:
        pytest.skip("this draw deletes nothing, or touches every file")

    def expected(kept_lines):
        plain = result.plain().context
        words = plain.parallelize(kept_lines, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
        return later(words, plain.textFile(topics, 2).map(lambda line: tuple(line.split(",")))).collect()

    remaining = [line for file_lines in texts for line in file_lines if victim not in line.split()]
    oracle = Counter(repr(x) for x in expected(remaining))
    victim_file = Path(untouched[0])
    stat = victim_file.stat()
    victim_file.write_text("".join("z" * len(line) + "\n" for line in victim_file.read_text().split("\n")[:-1]))
    os.utime(victim_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert victim_file.stat().st_size == stat.st_size

    job = StoredJob.open(lc.store, sc)
    assert job is not None
    deleted = doomed.frontier()
    assert aggregated_combines(job, Build(job, deleted), deleted), f"{name}: the count's aggregates were all kept"
    output = result.getLineage().points()[0]
    assert Counter(repr(x) for x in job.rerun(output, deleted)) == oracle, name
    assert job.report()["how"] == Restricted.name, name  # the later stages on the touched keys (query.delta)
    impact = doomed.whatIfDeleted()  # the what-if in the job's own process takes the same path
    assert Counter(repr(x) for x in impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()) \
        == oracle, name


def write_topics(path, rng):
    words = WORDS + ["only0", "only1", "only2"]
    path.write_text("".join(f"{w},{rng.choice(['red', 'blue'])}\n" for w in words if rng.random() < 0.8))
    return str(path)
