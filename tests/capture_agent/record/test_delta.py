"""Key-restricted (delta) replay of what-ifs (``query.delta``): the stages after a word count
replayed on the keys the deletion touches only, checked against plain PySpark on the lines that
remain (both multiset invariants of the four classes), and shown to replay only those keys."""

from __future__ import annotations

import random
from collections import Counter
from operator import add

import pytest

from capture_agent.record import LineageContext
from capture_agent.record.query.replay_strategies import FromAggregates, Restricted
from capture_agent.record.storage.tables import aggregates_name

pytestmark = pytest.mark.spark

WORDS = ["a", "b", "c", "d", "e", "f", "g", "h"]


def normal(record):
    """A record with its groups (groupByKey's iterables, cogroup's) as sorted lists."""
    if type(record).__name__ == "ResultIterable":
        return sorted(repr(normal(v)) for v in record)
    if isinstance(record, tuple):
        return tuple(normal(v) for v in record)
    return record


def bag(records):
    return Counter(repr(normal(r)) for r in records)


def later_stages():
    """(name, the job after its word count, given the (word, topic) table): every shape delta
    replay covers, after an aggregate."""
    return [
        ("words by count", lambda counts, topics: counts.map(lambda kv: (kv[1], kv[0])).groupByKey()
         .mapValues(sorted)),
        ("groups collected", lambda counts, topics: counts.map(lambda kv: (kv[1] % 3, kv[0])).groupByKey()),
        ("join", lambda counts, topics: counts.join(topics)),
        ("topic totals", lambda counts, topics: counts.join(topics).map(lambda kv: (kv[1][1], kv[1][0]))
         .reduceByKey(add)),
        ("distinct counts", lambda counts, topics: counts.map(lambda kv: kv[1]).distinct()),
        ("count of counts", lambda counts, topics: counts.map(lambda kv: (kv[1], 1)).reduceByKey(add)),
        ("outer join, distinct", lambda counts, topics: counts.fullOuterJoin(topics).mapValues(repr).distinct()),
        ("left join on counts", lambda counts, topics: counts.map(lambda kv: (kv[1], kv[0]))
         .leftOuterJoin(topics.map(lambda kv: (len(kv[0]), kv[1])))),
        ("subtract", lambda counts, topics: counts.map(lambda kv: kv[1]).subtract(topics.map(lambda kv: len(kv[0])))),
        ("subtractByKey, union", lambda counts, topics: counts.subtractByKey(topics).union(
            counts.filter(lambda kv: kv[1] > 2))),
        ("cogroup, sorted", lambda counts, topics: counts.cogroup(topics).mapValues(
            lambda sides: (sorted(sides[0]), sorted(sides[1]))).sortByKey()),
        ("two groupings", lambda counts, topics: counts.map(lambda kv: (kv[1], kv[0])).groupByKey()
         .map(lambda kv: (len(kv[1]), kv[0])).reduceByKey(max)),
    ]


def write_topics(path, rng):
    path.write_text("".join(f"{w},{rng.choice(['red', 'blue'])}\n" for w in WORDS + ["z"] if rng.random() < 0.8))
    return str(path)


def captured_job(spark, tmp_path, seed, later, partitions=3):
    tmp_path.mkdir(parents=True)
    rng = random.Random(300 + seed)
    lines = [" ".join(rng.choices(WORDS, k=rng.randint(1, 5))) for _ in range(rng.randint(15, 60))]
    text = tmp_path / f"text-{seed}.txt"
    text.write_text("".join(line + "\n" for line in lines))
    topics = write_topics(tmp_path / f"topics-{seed}.txt", rng)
    lc = LineageContext(spark, store=str(tmp_path / f"store-{seed}"))
    source = lc.textFile(str(text), partitions)
    counts = source.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    result = later(counts, lc.textFile(topics, 2).map(lambda line: tuple(line.split(","))))
    original = result.collect()
    return lc, source, result, lines, topics, original, rng


def oracle(sc, lines, topics, later):
    """The job on the remaining lines, as plain PySpark."""
    words = sc.parallelize(lines, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    return later(words, sc.textFile(topics, 2).map(lambda line: tuple(line.split(",")))).collect()


def check_invariants(impact, original, expected):
    old = impact.deleted() + [o for o, _ in impact.changed()] + impact.unchanged()
    new = impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()
    assert bag(old) == bag(original)
    assert bag(new) == bag(expected)


@pytest.mark.parametrize("case", range(len(later_stages())))
def test_delta_replay_equals_a_plain_rerun_on_the_remaining_lines(spark, sc, tmp_path, case):
    name, later = later_stages()[case]
    for seed in range(2):
        lc, source, result, lines, topics, original, rng = captured_job(spark, tmp_path / f"{case}-{seed}", seed, later)
        victim = rng.choice(WORDS)

        def doomed(line, victim=victim, seed=seed):
            """A word's lines, or lines by their length (scattered over the partitions)."""
            return victim in line.split() if seed % 2 == 0 else len(line) % 4 == 1

        if not any(doomed(line) for line in lines):
            continue
        impact = source.getLineage().filter(doomed).whatIfDeleted()
        expected = oracle(sc, [line for line in lines if not doomed(line)], topics, later)
        check_invariants(impact, original, expected)
        assert impact.replay()["how"] == Restricted.name, name


def test_words_grouped_by_count_replay_only_the_counts_a_deletion_touches(spark, sc, tmp_path, write_text):
    """The issue's example: words grouped by their count. Deleting the line "c" moves c from
    count 3 to 2 (both groups change, though no deleted record is in group 2's lineage); deleting
    the line "a" moves a from 5 to 4: group 5 dies and group 4 appears. The grouping replays
    counts 2, 3, 4 and 5 only; groups 6, 7 and 8 are taken from the kept output."""
    lines = ["a a a a", "a", "b b b b b b", "c c", "c", "d d", "e e e", "f", "g g g g g g g", "h h h h h h h h"]
    path = write_text("counted.txt", lines)
    lc = LineageContext(spark, store=str(tmp_path / "store"))
    source = lc.textFile(path, 2)
    counts = source.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    groups = counts.map(lambda kv: (kv[1], kv[0])).filter(lambda kv: kv[0] > 1).groupByKey().mapValues(sorted)
    original = groups.collect()
    assert sorted(original) == [(2, ["d"]), (3, ["c", "e"]), (5, ["a"]), (6, ["b"]), (7, ["g"]), (8, ["h"])]
    impact = source.getLineage().filter(lambda line: line in ("a", "c")).whatIfDeleted()
    assert sorted(impact.changed()) == [((2, ["d"]), (2, ["c", "d"])), ((3, ["c", "e"]), (3, ["e"]))]
    assert impact.deleted() == [(5, ["a"])]
    assert impact.appeared() == [(4, ["a"])]
    assert sorted(impact.unchanged()) == [(6, ["b"]), (7, ["g"]), (8, ["h"])]
    check_invariants(impact, original, [(2, ["c", "d"]), (3, ["e"]), (4, ["a"]), (6, ["b"]), (7, ["g"]), (8, ["h"])])
    replay = impact.replay()
    assert replay["how"] == Restricted.name
    # the count merged again a and c only (their map-side aggregates changed), the grouping 4 counts
    assert sorted((label.split(" ")[0], n) for label, n in replay["keys_replayed"].items()) == \
        [("groupByKey", 4), ("reduceByKey", 2)]
    assert replay["stages_in_full"] == []
    # the count's whole output, which the grouping's restricted input is filtered from, is the one
    # its reduce side kept: read back, not merged again
    reducer = next(p for p in lc.store.by_seq() if p.kind == "reducer" and p.op == "reduceByKey")
    kept = [f"{reducer.location}/{aggregates_name(n)}" for n in range(reducer.num_partitions)]
    assert all(lc.store.fs.exists(path) for path in kept)


def test_a_word_moving_to_a_new_count_makes_its_group_appear(spark, sc, tmp_path, write_text):
    lines = ["a a a", "a", "b b b b", "c"]
    path = write_text("moves.txt", lines)
    lc = LineageContext(spark, store=str(tmp_path / "store"))
    source = lc.textFile(path, 2)
    counts = source.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    groups = counts.map(lambda kv: (kv[1], kv[0])).groupByKey().mapValues(sorted)
    original = groups.collect()
    impact = source.getLineage().filter(lambda line: line == "a").whatIfDeleted()
    assert impact.deleted() == []
    assert sorted(impact.changed()) == [((4, ["a", "b"]), (4, ["b"]))]
    assert impact.appeared() == [(3, ["a"])]
    assert sorted(impact.unchanged()) == [(1, ["c"])]
    check_invariants(impact, original, [(4, ["b"]), (3, ["a"]), (1, ["c"])])
    assert [n for label, n in impact.replay()["keys_replayed"].items() if label.startswith("groupByKey")] == [2]


def test_a_shape_it_does_not_cover_falls_back_to_all_keys(spark, sc, tmp_path, write_text):
    """mapPartitions after the count: not replayed by keys; every key's later stages run again on
    the kept aggregates, with the same answer."""
    lines = ["a b", "b c", "c d d", "e"]
    path = write_text("fallback.txt", lines)
    lc = LineageContext(spark, store=str(tmp_path / "store"))
    source = lc.textFile(path, 2)
    counts = source.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    result = counts.mapPartitions(lambda it: ((v, 1) for _, v in it)).reduceByKey(add)
    original = result.collect()
    impact = source.getLineage().filter(lambda line: "d" in line).whatIfDeleted()
    check_invariants(impact, original, [(1, 3), (2, 1)])
    assert impact.replay()["how"] == FromAggregates.name
