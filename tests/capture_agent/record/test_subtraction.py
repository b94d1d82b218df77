"""Subtracted sums in what-ifs (``query.subtraction``, ``query.delta``): a word count followed by a
join and a regroup (the shapes of ``bench/whatif.py --then join``, ``--then groups`` and ``--then
topic-groups``) gets its new output from the deleted records alone, checked against plain PySpark
on the lines that remain, for scattered deletions, a whole file and a rare word, the count made by
reduceByKey, foldByKey or aggregateByKey with ``operator.add``; and a replay that read any input
line that was not deleted would be wrong (every other line is overwritten after capture)."""

from __future__ import annotations

import os
import random
from collections import Counter
from operator import add
from pathlib import Path
from typing import Any

import pytest

from capture_agent.record import LineageContext, LineageRDD
from capture_agent.record.query.replay_strategies import Restricted
from capture_agent.record.query.run import LineageRun
from capture_agent.record.query.subtraction import subtracted
from capture_agent.record.query.whatif import what_if_deleted

pytestmark = pytest.mark.spark

COMMON = [f"w{n}" for n in range(12)]


def then_join(counts: Any, topics: Any) -> Any:
    return counts.join(topics).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)


def then_groups(counts: Any, topics: Any) -> Any:
    return counts.map(lambda kv: (kv[1], kv[0])).groupByKey().mapValues(lambda words: tuple(sorted(words)))


def then_topic_groups(counts: Any, topics: Any) -> Any:
    return counts.join(topics).map(lambda kv: (kv[1][1], kv[1][0])).groupByKey().mapValues(
        lambda topic_counts: (len(topic_counts), max(topic_counts)))


SHAPES = {"join": then_join, "groups": then_groups, "topic_groups": then_topic_groups}
# the path each stage takes: the count and the topic sums subtract, the join runs on keys, the
# groups are their kept members patched
PATHS = {"join": ["subtracted", "keys", "subtracted"], "groups": ["subtracted", "regrouped"],
         "topic_groups": ["subtracted", "keys", "regrouped"]}
# the word count, as each combine that is a sum of ints makes it
COUNTS = {"reduceByKey": lambda pairs: pairs.reduceByKey(add, 2),
          "foldByKey": lambda pairs: pairs.foldByKey(0, add, 2),
          "aggregateByKey": lambda pairs: pairs.aggregateByKey(0, add, add, 2)}


def texts(rng: random.Random, files: int = 4) -> list[list[str]]:
    """Per file, Zipf-like lines of common words; file n alone has the rare word ``rare{n}`` (twice)."""
    weights = [1 / (n + 1) for n in range(len(COMMON))]
    found = []
    for n in range(files):
        lines = [" ".join(rng.choices(COMMON, weights, k=rng.randint(1, 6))) for _ in range(rng.randint(20, 40))]
        for at in rng.sample(range(len(lines)), 2):
            lines[at] += f" rare{n}"
        found.append(lines)
    return found


def captured(spark: Any, tmp_path: Path, shape: str, seed: int, count: str = "reduceByKey"
             ) -> tuple[Any, Any, Any, list[list[str]], str]:
    """The word count (made by ``count``) of a folder of files followed by ``shape``, run captured."""
    rng = random.Random(seed)
    folder = tmp_path / "text"
    folder.mkdir()
    files = texts(rng)
    for n, file_lines in enumerate(files):
        (folder / f"part-{n}.txt").write_text("".join(line + "\n" for line in file_lines))
    topics = tmp_path / "topics.csv"
    topics.write_text("".join(f"{w},t{n % 3}\n" for n, w in enumerate(COMMON + [f"rare{n}" for n in range(4)])))
    lc = LineageContext(spark, store=str(tmp_path / "store"))
    lines = lc.textFile(str(folder))
    counts = COUNTS[count](lines.flatMap(str.split).map(lambda w: (w, 1)))
    result = SHAPES[shape](counts, lc.textFile(str(topics), 2).map(lambda line: tuple(line.split(","))))
    result.collect()
    return lc, lines, result, files, str(topics)


def oracle(sc: Any, shape: str, kept_lines: list[str], topics: str) -> Counter[str]:
    words = sc.parallelize(kept_lines, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    return Counter(repr(r) for r in SHAPES[shape](words, sc.textFile(topics, 2).map(lambda line: tuple(line.split(
        ",")))).collect())


def selection(lc: Any, lines: Any, files: list[list[str]], deletion: str) -> tuple[Any, set[tuple[int, int]]]:
    """The lines ``deletion`` names, as a LineageRDD, and as (file, line) pairs."""
    lineage = lines.getLineage()
    point = lineage.points()[0]
    if deletion == "scatter":
        doomed = {(f, n) for f, file_lines in enumerate(files) for n in range(len(file_lines)) if n % 7 == 3}
    elif deletion == "file":
        doomed = {(1, n) for n in range(len(files[1]))}
    else:
        doomed = {(f, n) for f, file_lines in enumerate(files) for n, line in enumerate(file_lines)
                  if "rare2" in line.split()}
    line_at = {}  # (file, byte offset) -> (file, line)
    for f, file_lines in enumerate(files):
        offset = 0
        for n, line in enumerate(file_lines):
            line_at[(f"part-{f}.txt", offset)] = (f, n)
            offset += len(line) + 1
    ids = [i for i, at in zip(lineage.ids(), lineage.positions(), strict=True)
           if line_at[(os.path.basename(at.source), at.offset)] in doomed]
    assert len(ids) == len(doomed)
    return LineageRDD.at_point(lc.lineage_session, point, ids), doomed


def remaining_lines(files: list[list[str]], doomed: set[tuple[int, int]]) -> list[str]:
    return [line for f, file_lines in enumerate(files) for n, line in enumerate(file_lines) if (f, n) not in doomed]


def new_output(impact: Any) -> Counter[str]:
    return Counter(repr(r) for r in impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared())


def stage_paths(replay: dict[str, Any]) -> list[str]:
    return [path for _, path in sorted(replay["stage_paths"].items(), key=lambda kv: int(kv[0].split("#")[1]))]


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("deletion", ["scatter", "file", "rare"])
def test_a_count_and_what_follows_it_are_the_deleted_records_subtracted(spark, sc, tmp_path, shape, deletion):
    lc, lines, result, files, topics = captured(spark, tmp_path, shape, seed=len(deletion) + len(shape))
    chosen, doomed = selection(lc, lines, files, deletion)
    impact = chosen.whatIfDeleted()
    remaining = remaining_lines(files, doomed)
    assert new_output(impact) == oracle(sc, shape, remaining, topics)
    replay = impact.replay()
    assert replay["how"] == Restricted.name
    assert stage_paths(replay) == PATHS[shape]
    assert replay["stages_in_full"] == []


@pytest.mark.parametrize("count", sorted(COUNTS))
@pytest.mark.parametrize("deletion", ["scatter", "rare"])
def test_a_fold_or_aggregate_from_zero_with_add_is_a_sum_subtracted(spark, sc, tmp_path, count, deletion):
    lc, lines, result, files, topics = captured(spark, tmp_path, "groups", seed=5 + len(count), count=count)
    chosen, doomed = selection(lc, lines, files, deletion)
    impact = chosen.whatIfDeleted()
    assert new_output(impact) == oracle(sc, "groups", remaining_lines(files, doomed), topics)
    assert stage_paths(impact.replay()) == PATHS["groups"]


@pytest.mark.parametrize(("shape", "count"), [*((shape, "reduceByKey") for shape in sorted(SHAPES)),
                                              ("topic_groups", "foldByKey")])
def test_the_replay_reads_no_input_line_that_was_not_deleted(spark, sc, tmp_path, shape, count):
    """Every line that is not deleted, in every file (those holding deleted lines too), is
    overwritten after capture with another of the same length, the files' sizes and modification
    times kept: the what-if, from the run's folder as the server's worker runs it and in the job's
    own process, still equals the job on the original remaining lines."""
    lc, lines, result, files, topics = captured(spark, tmp_path, shape, seed=11, count=count)
    chosen, doomed = selection(lc, lines, files, "scatter")
    deleted = chosen.frontier()
    remaining = remaining_lines(files, doomed)
    expected = oracle(sc, shape, remaining, topics)
    for f, file_lines in enumerate(files):
        path = tmp_path / "text" / f"part-{f}.txt"
        stat = path.stat()
        path.write_text("".join((line if (f, n) in doomed else "z" * len(line)) + "\n"
                                for n, line in enumerate(file_lines)))
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        assert path.stat().st_size == stat.st_size

    run = LineageRun(lc.run_dir, sc)
    impact = what_if_deleted(run.session, deleted)
    assert new_output(impact) == expected
    assert stage_paths(impact.replay()) == PATHS[shape]
    impact = chosen.whatIfDeleted()  # in the job's own process
    assert new_output(impact) == expected
    assert stage_paths(impact.replay()) == PATHS[shape]


def test_a_sum_left_at_zero_survives_when_lineage_says_records_remain(spark, sc, tmp_path, write_text):
    """Signed values: a word whose remaining values sum to 0 keeps its record (lineage says some
    of its records remain), one that loses every record is gone; then joined and summed again,
    where a topic left at 0 with nothing added is undecided and its stage is replayed on keys
    (from the join's whole output)."""
    lines = ["a b", "a", "c", "b b", "c a"]
    path = write_text("signed.txt", lines)
    topics = write_text("topics.csv", ["a,x", "b,x", "c,y"])
    lc = LineageContext(spark, store=str(tmp_path / "store"))

    def pairs(line: str) -> list[tuple[str, int]]:
        return [(w, 1 if w != "a" or line == "c a" else -1) for w in line.split()]

    def job(ctx: Any, source: Any) -> tuple[Any, Any]:
        counts = source.flatMap(pairs).reduceByKey(add, 2)
        joined = counts.join(ctx.textFile(topics, 2).map(lambda line: tuple(line.split(","))))
        return counts, joined.map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)

    source = lc.textFile(path, 2)
    counts, totals = job(lc, source)
    assert sorted(totals.collect()) == [("x", 2), ("y", 2)]  # a: -1 -1 +1, b: 3, c: 2
    cases: list[tuple[tuple[str, ...], list[str]]] = [
        (("a b", "c"), ["subtracted", "keys", "subtracted"]),  # a: 0, b: 2, c: 1
        (("c", "c a"), ["subtracted", "in-full", "keys"]),  # a: -2, b: 3, c and y gone
    ]
    for doomed, paths in cases:
        impact = source.getLineage().filter(doomed.__contains__).whatIfDeleted()
        expected = sorted(job(sc, sc.parallelize([line for line in lines if line not in doomed], 2))[1].collect())
        assert sorted(impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()) == expected
        assert stage_paths(impact.replay()) == paths

    counted = lc.textFile(path, 2)
    words = counted.flatMap(pairs).reduceByKey(add, 2)
    words.map(lambda kv: (kv[1], kv[0])).groupByKey().mapValues(sorted).collect()
    impact = counted.getLineage().filter(lambda line: line in ("a", "c")).whatIfDeleted()
    # a: -1 +1 = 0, still there; c: gone
    expected_groups = sorted(sc.parallelize(["a b", "b b", "c a"]).flatMap(pairs).reduceByKey(add)
                             .map(lambda kv: (kv[1], kv[0])).groupByKey().mapValues(sorted).collect())
    assert (0, ["a"]) in expected_groups
    assert sorted(impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()) == expected_groups
    assert stage_paths(impact.replay()) == ["subtracted", "regrouped"]


@pytest.mark.parametrize("count", [
    lambda pairs: pairs.reduceByKey(add, 2),
    lambda pairs: pairs.foldByKey(0, add, 2),  # a zero that is an int: the floats still say no
    lambda pairs: pairs.foldByKey(0.0, add, 2),
    lambda pairs: pairs.aggregateByKey(0.0, add, add, 2),
])
def test_a_float_sum_is_combined_again(spark, sc, tmp_path, write_text, count):
    """A sum of floats is not subtracted (not exact): the touched partitions are combined again."""
    path = write_text("floats.txt", ["a b", "a", "b c", "c"])
    lc = LineageContext(spark, store=str(tmp_path / "store"))
    source = lc.textFile(path, 2)
    count(source.flatMap(str.split).map(lambda w: (w, 0.5))).map(lambda kv: (kv[1], kv[0])) \
        .groupByKey().mapValues(sorted).collect()
    impact = source.getLineage().filter(lambda line: line == "a").whatIfDeleted()
    assert sorted(impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()) == \
        [(0.5, ["a"]), (1.0, ["b", "c"])]
    assert stage_paths(impact.replay()) == ["recombined", "regrouped"]


def test_a_fold_from_another_zero_or_with_another_function_is_not_a_sum(spark, sc, tmp_path, write_text):
    """foldByKey(1, add) counts one more per partition, aggregateByKey(0, add, max) merges by max:
    neither is subtracted, both combined again, with the re-run's answer."""
    lines = ["a b", "a", "b c", "c", "a a"]
    path = write_text("folds.txt", lines)
    jobs = [lambda pairs: pairs.foldByKey(1, add, 2), lambda pairs: pairs.aggregateByKey(0, add, max, 2)]
    for job in jobs:
        lc = LineageContext(spark, store=str(tmp_path / f"store-{jobs.index(job)}"))
        source = lc.textFile(path, 2)
        job(source.flatMap(str.split).map(lambda w: (w, 1))).collect()
        impact = source.getLineage().filter(lambda line: line == "a").whatIfDeleted()
        expected = sorted(job(sc.textFile(path, 2).filter(lambda line: line != "a").flatMap(str.split)
                              .map(lambda w: (w, 1))).collect())
        assert sorted(impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared()) == expected
        assert stage_paths(impact.replay()) == ["recombined"]


def test_subtracted_sums_decide_a_key_left_at_zero_only_with_lineage_or_a_record_added():
    old = {"a": 3, "b": 2, "c": 1}
    assert subtracted(old, {"a": 1, "c": 1}, {}, frozenset({"c"})) == {"a": 2}
    assert subtracted(old, {"b": 2}, {}, frozenset()) == {"b": 0}  # lineage: b keeps records summing to 0
    assert subtracted(old, {"b": 2}, {}, None) is None  # undecided
    assert subtracted(old, {"b": 2}, {"b": 0, "d": 4}, None) == {"b": 0, "d": 4}  # a record came to b
    assert subtracted(old, {"e": 1}, {}, None) is None  # a record left a key that had none
    assert subtracted({"a": 1.5}, {"a": 0.5}, {}, None) is None  # not ints
