"""What-if deletion, as far as lineage decides: the fates of a job's outputs when input records are
deleted equal oracles computed from the data (which outputs lose all their inputs, which some,
which none), on word count, a nested aggregation, joins (inner and outer), distinct, union and
whole-partition results."""

from __future__ import annotations

from operator import add

import pytest

from capture_agent.record import LineageRDD
from tests.capture_agent.record.whatif_data import ORDERS, TEXT, USERS

pytestmark = pytest.mark.spark



def fates_by_value(impact):
    return {"deleted": sorted(impact.dead()), "reached": sorted(impact.reached()),
            "unreached": sorted(impact.unreached())}


def word_fates(lines, doomed):
    """Per word: deleted when every line holding it is doomed, reached when some are, else unreached."""
    fate = {}
    for word in {w for line in lines for w in line.split()}:
        holders = [line for line in lines if word in line.split()]
        gone = [line for line in holders if doomed(line)]
        fate[word] = "deleted" if len(gone) == len(holders) else "reached" if gone else "unreached"
    return fate


def split_by_fate(values, fate_of):
    out: dict[str, list] = {"deleted": [], "reached": [], "unreached": []}
    for value in values:
        out[fate_of(value)].append(value)
    return {k: sorted(v) for k, v in out.items()}


def test_word_count_outputs_die_with_their_last_line(lc, write_text):
    path = write_text("words.txt", TEXT)
    lines = lc.textFile(path, 3)
    counts = lines.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
    result = counts.collect()
    impact = lines.getLineage().filter(lambda line: "error" in line).whatIfDeleted()
    fate = word_fates(TEXT, lambda line: "error" in line)
    assert fates_by_value(impact) == split_by_fate(result, lambda kv: fate[kv[0]])
    doomed = sum("error" in line for line in TEXT)
    input_point = lines.getLineage().points()[0]
    assert impact.counts()[input_point] == {"deleted": doomed, "changed": 0}


def test_a_group_on_computed_counts_is_reached_through_the_words_it_holds(lc, write_text):
    path = write_text("words.txt", TEXT)
    lines = lc.textFile(path, 2)
    by_count = (lines.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
                .map(lambda kv: (kv[1], kv[0])).groupByKey(2).mapValues(sorted))
    result = by_count.collect()
    impact = lines.getLineage().filter(lambda line: "the" in line.split()).whatIfDeleted()
    fate = word_fates(TEXT, lambda line: "the" in line.split())

    def group_fate(group):
        words = [fate[w] for w in group[1]]
        if all(f == "deleted" for f in words):
            return "deleted"
        return "reached" if any(f != "unreached" for f in words) else "unreached"

    assert fates_by_value(impact) == split_by_fate(result, group_fate)




def keyed(lc, write_text):
    """(user lines, order lines, users by id, orders by user id)."""
    user_lines = lc.textFile(write_text("users.csv", USERS), 2)
    order_lines = lc.textFile(write_text("orders.csv", ORDERS), 3)
    users = user_lines.map(lambda s: s.split(",")).map(lambda f: (f[0], f[1]))
    orders = order_lines.map(lambda s: s.split(",")).map(lambda f: (f[1], (f[0], int(f[2]))))
    return user_lines, order_lines, users, orders


def test_an_inner_join_pair_dies_with_either_side(lc, write_text):
    user_lines, order_lines, users, orders = keyed(lc, write_text)
    pairs = orders.join(users, 2)
    result = pairs.collect()
    impact = user_lines.getLineage().filter(lambda line: line == "u2,bob").whatIfDeleted()
    assert fates_by_value(impact) == split_by_fate(result, lambda p: "deleted" if p[1][1] == "bob" else "unreached")
    impact = order_lines.getLineage().filter(lambda line: int(line.split(",")[2]) >= 5).whatIfDeleted()
    assert fates_by_value(impact) == split_by_fate(result, lambda p: "deleted" if p[1][0][1] >= 5 else "unreached")


def test_a_left_outer_join_pair_loses_its_right_side_and_dies_with_its_left(lc, write_text):
    user_lines, order_lines, users, orders = keyed(lc, write_text)
    pairs = orders.leftOuterJoin(users, 2)
    result = pairs.collect()
    # carol is u3's only user row: its pair keeps the order and loses the user (changed)
    impact = user_lines.getLineage().filter(lambda line: line == "u3,carol").whatIfDeleted()
    assert fates_by_value(impact) == split_by_fate(result, lambda p: "reached" if p[1][1] == "carol"
                                                   else "unreached")
    impact = order_lines.getLineage().filter(lambda line: ",u9," in line).whatIfDeleted()
    assert fates_by_value(impact) == split_by_fate(result, lambda p: "deleted" if p[0] == "u9" else "unreached")


def test_a_distinct_value_lives_while_any_of_its_records_does(lc, write_text):
    values = ["a", "b", "a", "c", "b", "d", "a", "e"]
    path = write_text("values.txt", values)
    lines = lc.textFile(path, 3)
    distinct = lines.distinct(2)
    result = distinct.collect()
    impact = lines.getLineage().filter(lambda v: v in ("b", "c")).whatIfDeleted()
    assert fates_by_value(impact) == split_by_fate(result, lambda v: "deleted" if v in ("b", "c") else "unreached")
    # deleting only some of a's records leaves it untouched
    lin = lines.getLineage()
    first_a = [i for i, v in lin.items() if v == "a"][:2]
    impact = LineageRDD.at_point(lc.lineage_session, lin.points()[0], first_a).whatIfDeleted()
    assert impact.dead() == [] and impact.reached() == []
    assert sorted(impact.unreached()) == sorted(result)


def test_union_outputs_are_copies_and_a_count_changes_until_every_record_is_gone(lc, write_text):
    left = lc.textFile(write_text("left.txt", ["l1", "l2", "l3"]), 2)
    right = lc.textFile(write_text("right.txt", ["r1", "r2"]), 1)
    both = left.union(right).map(str.upper)
    result = both.collect()
    impact = right.getLineage().whatIfDeleted()
    assert fates_by_value(impact) == split_by_fate(result, lambda v: "deleted" if v.startswith("R") else "unreached")
    total = both.count()
    assert total == 5
    some = left.getLineage().filter(lambda v: v != "l2").whatIfDeleted()
    assert (some.dead(), some.reached(), some.unreached()) == ([], [5], [])
    assert some.counts()[some.target] == {"deleted": 0, "changed": 1}
    everything = both.getLineage().goBackAll().whatIfDeleted()
    assert everything.dead() == [5]
