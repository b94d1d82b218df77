"""Deletion rules as the layouts derive them from (kind, mode), checked on what the operators do.

Each case says, for one output record, how many of its inputs at each parent slot are deleted
(lost) out of how many it has (total), and what becomes of it when the job runs again without them.
"""

from __future__ import annotations

import pytest

from capture_agent.record.storage.deletion import Fate
from capture_agent.record.storage.layouts import (
    ListGlobal,
    ListLocal,
    OneGlobal,
    OneLocal,
    Pair,
    SetGlobal,
    SetLocal,
    SetPartition,
    Sets,
    Single,
    Text,
    Union,
    Values,
)

D, C, U = Fate.DELETED, Fate.CHANGED, Fate.UNCHANGED

CASES = [
    # (layout, kind, lost per slot, total per slot, fate, why)
    (Text(), "input", [1], [1], D, "a deleted input line"),
    (Values(), "input", [0], [1], U, "an input line kept"),
    (OneLocal(), "output", [1], [1], D, "collect: the record's one input is gone"),
    (OneLocal(), "stage", [0], [1], U, "a map chain over a kept record"),
    (OneGlobal(), "stage", [1], [1], D, "repartition/sort moves the record; its input is gone"),
    (Union(ranges=[]), "union", [1], [1], D, "a union record is its input"),
    (SetLocal(), "combiner", [1], [3], C, "a partial sum loses one of three values"),
    (SetLocal(), "combiner", [3], [3], D, "a partial sum loses all its values"),
    (ListLocal(), "combiner", [1], [3], C, "a map-side combine loses one of three values"),
    (ListLocal(mode="distinct"), "combiner", [1], [3], U, "distinct's map side: the value still occurs"),
    (ListGlobal(mode="combine"), "reducer", [1], [2], C, "reduceByKey: one of two combiners gone"),
    (ListGlobal(mode="distinct"), "reducer", [1], [2], U, "distinct: the value still occurs"),
    (ListGlobal(mode="distinct"), "reducer", [2], [2], D, "distinct: every occurrence gone"),
    (SetGlobal(mode="group"), "reducer", [1], [4], C, "groupByKey: the group shrinks"),
    (SetGlobal(mode="group"), "reducer", [4], [4], D, "groupByKey: the group is empty, the key disappears"),
    (Sets(mode="cogroup"), "reducer", [2, 0], [2, 1], C, "cogroup: one side empties, the other remains"),
    (Sets(mode="cogroup"), "reducer", [2, 1], [2, 1], D, "cogroup: both sides empty"),
    (Sets(mode="intersection"), "reducer", [1, 0], [2, 1], U, "intersection: still on both sides"),
    (Sets(mode="intersection"), "reducer", [0, 1], [2, 1], D, "intersection: gone from the right side"),
    (Pair(mode="join"), "join", [0, 1], [1, 1], D, "inner join: the right record is gone"),
    (Pair(mode="cartesian"), "join", [1, 0], [1, 1], D, "cartesian: the left record is gone"),
    (Pair(mode="left"), "join", [1, 0], [1, 1], D, "left outer join: the left record is gone"),
    (Pair(mode="left"), "join", [0, 1], [1, 1], C, "left outer join: the match is gone, (v, None) remains"),
    (Pair(mode="left"), "join", [1, 0], [1, 0], D, "left outer join without a match: its left record is gone"),
    (Pair(mode="right"), "join", [1, 0], [1, 1], C, "right outer join: the left match is gone"),
    (Pair(mode="right"), "join", [0, 1], [1, 1], D, "right outer join: the right record is gone"),
    (Pair(mode="full"), "join", [1, 0], [1, 1], C, "full outer join: one side is gone, the other remains"),
    (Pair(mode="full"), "join", [1, 1], [1, 1], D, "full outer join: both sides are gone"),
    (Pair(mode="full"), "join", [0, 1], [0, 1], D, "full outer join, right only: it is gone"),
    (OneGlobal(mode="subtract"), "reducer", [1], [1], D, "subtract: the left record is gone"),
    (OneGlobal(mode="subtract_by_key"), "reducer", [0], [1], U, "subtractByKey: the left record stays"),
    (Single(), "output", [2], [5], C, "count: fewer records counted"),
    (SetPartition(), "stage", [1], [3], C, "mapPartitions over a partition that lost a record"),
]


@pytest.mark.parametrize(("layout", "kind", "lost", "total", "fate", "why"), CASES,
                         ids=[case[-1] for case in CASES])
def test_fate(layout, kind, lost, total, fate, why):
    assert layout.deletion(kind).fate(lost, total) is fate


def test_deletions_that_can_make_outputs_appear():
    """Right-side deletions under subtract, lost matches under outer joins, records past a limit."""
    assert OneGlobal(mode="subtract").deletion("reducer").appears
    assert Pair(mode="left").deletion("join").appears and Pair(mode="full").deletion("join").appears
    assert OneLocal(limit=3).deletion("output").appears and OneGlobal(num=3).deletion("output").appears
    assert not Pair(mode="join").deletion("join").appears
    assert not ListGlobal(mode="combine").deletion("reducer").appears
    assert not OneLocal().deletion("output").appears


def test_labels_follow_lipstick():
    assert Text().deletion("input").label == "token"
    assert ListGlobal().deletion("reducer").label == "+"
    assert ListGlobal(mode="distinct").deletion("reducer").label == "δ"
    assert Pair(mode="join").deletion("join").label == "·"
    assert OneGlobal(mode="subtract").deletion("reducer").label == "−"


@pytest.mark.spark
def test_captured_operators_carry_the_mode_their_rule_needs(lc):
    a = lc.parallelize([(1, "a"), (2, "b"), (2, "c")], 2)
    b = lc.parallelize([(1, "x")], 1)
    a.leftOuterJoin(b).collect()
    a.subtractByKey(b).collect()
    a.keys().distinct().collect()
    a.keys().intersection(b.keys()).collect()
    a.reduceByKey(lambda x, y: x + y).collect()
    labels = sorted((p.op, p.deletion.label) for p in lc.capture_points() if p.kind in ("join", "reducer"))
    assert labels == [("intersection", "δ·δ"), ("leftOuterJoin", "·/+"), ("reduceByKey", "+"), ("reduceByKey", "δ"),
                      ("subtractByKey", "−")]
