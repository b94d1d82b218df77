"""Regrouped groups in what-ifs (``query.regroup``): a groupByKey whose tasks kept their groups is
patched from the changed records alone (its input, a join re-keyed by a map, never needed whole),
whatever function follows it; over ``LINEAGE_KEEP_AGGREGATES`` records a task keeps none and the
stage is replayed on keys, with the same answer as a re-run on the remaining lines."""

from __future__ import annotations

from collections import Counter
from operator import add
from typing import Any

import pytest

from capture_agent.record import LineageContext
from capture_agent.record.query.regroup import regrouped
from capture_agent.record.query.replay_strategies import Restricted

LINES = ["a b c", "a", "b b d", "c e", "d d d", "e f", "f f a", "g"]
TOPICS = ["a,x", "b,x", "c,y", "d,y", "e,z", "f,z", "g,x"]


def test_a_group_loses_the_values_that_left_and_gains_those_that_came():
    old: dict[str, list[Any]] = {"x": [1, 2, 2, 3], "y": [[1], [2]], "z": [5]}
    assert regrouped(old, [("x", 2), ("y", [1])], [("x", 4), ("w", 1)]) == {"x": [1, 2, 3, 4], "y": [[2]], "w": [1]}
    assert regrouped(old, [("z", 5)], []) == {}  # an emptied group is gone
    assert regrouped(old, [("z", 5)], [("z", 6)]) == {"z": [6]}
    assert regrouped(old, [("x", 7)], []) is None  # a record that was not in its group
    assert regrouped(old, [("z", 5), ("z", 5)], []) is None  # nor twice in it


def topic_groups(counts: Any, topics: Any) -> Any:
    """The words' counts per topic, each three times: how many, and the highest (no sum to
    subtract); a topic's group has six records or more."""
    return counts.join(topics).flatMap(lambda kv: [(kv[1][1], kv[1][0])] * 3).groupByKey().mapValues(
        lambda values: (len(values), max(values)))


def run(spark: Any, sc: Any, tmp_path: Any, write_text: Any, doomed: set[str]) -> tuple[Any, Counter[Any]]:
    """The captured job's what-if without the ``doomed`` lines, and the re-run's output."""
    path = write_text("text.txt", LINES)
    topics = write_text("topics.csv", TOPICS)
    lc = LineageContext(spark, store=str(tmp_path / "store"))
    source = lc.textFile(path, 3)
    topic_groups(source.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 3),
                 lc.textFile(topics, 2).map(lambda line: tuple(line.split(",")))).collect()
    impact = source.getLineage().filter(doomed.__contains__).whatIfDeleted()
    rerun = topic_groups(sc.parallelize([line for line in LINES if line not in doomed], 3).flatMap(str.split)
                         .map(lambda w: (w, 1)).reduceByKey(add, 3),
                         sc.textFile(topics, 2).map(lambda line: tuple(line.split(","))))
    return impact, Counter(rerun.collect())


def new_output(impact: Any) -> Counter[Any]:
    return Counter(impact.unchanged() + [n for _, n in impact.changed()] + impact.appeared())


@pytest.mark.spark
@pytest.mark.parametrize("doomed", [{"a"}, {"f f a", "e f"}, {"g"}, {"d d d", "b b d"}])
def test_groups_after_a_rekeyed_join_are_patched_not_replayed_from_the_whole_join(
        spark, sc, tmp_path, write_text, doomed):
    """Deleting a word's lines changes its count (or drops the word: "g"), so its topic's group
    changes; the join runs on the touched words only, and the grouping needs no other record."""
    impact, expected = run(spark, sc, tmp_path, write_text, doomed)
    assert new_output(impact) == expected
    replay = impact.replay()
    assert replay["how"] == Restricted.name
    paths = sorted(replay["stage_paths"].items(), key=lambda kv: int(kv[0].split("#")[1]))
    assert [(label.split(" ")[0], path) for label, path in paths] == \
        [("reduceByKey", "subtracted"), ("join", "keys"), ("groupByKey", "regrouped")]
    assert replay["stages_in_full"] == []


@pytest.mark.spark
def test_a_task_over_the_bound_keeps_no_groups_and_the_grouping_runs_on_keys(
        spark, sc, tmp_path, write_text, monkeypatch):
    """At LINEAGE_KEEP_AGGREGATES=5 the count's tasks (five words or fewer each) keep their sums
    but the grouping's (six records or more) keep no groups: the grouping is replayed on its keys,
    from the join's whole output, as exact."""
    monkeypatch.setenv("LINEAGE_KEEP_AGGREGATES", "5")
    impact, expected = run(spark, sc, tmp_path, write_text, {"a"})
    assert new_output(impact) == expected
    replay = impact.replay()
    paths = sorted(replay["stage_paths"].items(), key=lambda kv: int(kv[0].split("#")[1]))
    assert [(label.split(" ")[0], path) for label, path in paths] == \
        [("reduceByKey", "subtracted"), ("join", "in-full"), ("groupByKey", "keys")]
