"""What-if deletion, exactly: each workload's prediction (deleted, changed with new values,
unchanged, appeared) against the oracle of re-running the job with plain PySpark on input files
written without the deleted lines."""

from __future__ import annotations

from collections import Counter
from operator import add

import pytest
from pyroaring import BitMap64

from capture_agent.record import LineageRun, ReplayNotPossible
from capture_agent.record.query.whatif import classify
from tests.capture_agent.record.whatif_data import ERROR_ONLY, ORDERS, TEXT, USERS

pytestmark = pytest.mark.spark


@pytest.fixture(params=["live", "folder"])
def where(request, sc):
    """Where the what-if runs: in the job's context (its functions at hand), or on its run opened
    from the folder with only the job kept there (``query.stored_job``), as the server's worker does."""
    if request.param == "live":
        return lambda lineage: lineage

    def reopened(lineage):
        session = lineage._lc
        run = LineageRun(session.store.fs.uri(session.store.run_dir), sc)
        [cid] = lineage.points()
        return run.lineage(cid, list(lineage.frontier()[cid]))

    return reopened


def multiset(values):
    return Counter(repr(v) for v in values)


def assert_exact(impact, original, rerun):
    """The two identities of the what-if result, against the original output and the rerun."""
    old_side = impact.deleted() + [old for old, _ in impact.changed()] + impact.unchanged()
    new_side = impact.unchanged() + [new for _, new in impact.changed()] + impact.appeared()
    assert multiset(old_side) == multiset(original)
    assert multiset(new_side) == multiset(rerun)


def by_key(original, rerun):
    """Keyed outputs with unique keys: the classes a key-by-key comparison gives."""
    old, new = dict(original), dict(rerun)
    return {"deleted": sorted((k, v) for k, v in old.items() if k not in new),
            "changed": sorted(((k, v), (k, new[k])) for k, v in old.items() if k in new and new[k] != v),
            "unchanged": sorted((k, v) for k, v in old.items() if new.get(k, object()) == v),
            "appeared": sorted((k, v) for k, v in new.items() if k not in old)}


def classes(impact):
    return {"deleted": sorted(impact.deleted()), "changed": sorted(impact.changed()),
            "unchanged": sorted(impact.unchanged()), "appeared": sorted(impact.appeared())}


def without(write_text, name, lines, doomed):
    return write_text(f"without-{name}", [line for line in lines if not doomed(line)])


def word_count(ctx, path, partitions=3):
    return ctx.textFile(path, partitions).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)


def test_word_count_changes_the_counts_of_words_left_in_other_lines(lc, sc, write_text, where):
    path = write_text("words.txt", TEXT)
    counts = word_count(lc, path)
    original = counts.collect()
    doomed = lambda line: "error" in line  # noqa: E731
    impact = where(counts.getLineage()).goBackAll().filter(doomed).whatIfDeleted()
    rerun = word_count(sc, without(write_text, "words.txt", TEXT, doomed)).collect()
    assert_exact(impact, original, rerun)
    assert classes(impact) == by_key(original, rerun)
    assert sorted(impact.deleted()) == ERROR_ONLY
    assert counts.collect() == original  # the job's own RDDs are as they were


def test_a_group_on_computed_counts_moves_words_between_groups(lc, sc, write_text, where):
    path = write_text("words.txt", TEXT)

    def by_count(ctx, p):
        counts = ctx.textFile(p, 2).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
        return counts.map(lambda kv: (kv[1], kv[0])).groupByKey(2).mapValues(sorted)

    groups = by_count(lc, path)
    original = groups.collect()
    doomed = lambda line: "dog" in line.split()  # noqa: E731
    impact = where(groups.getLineage()).goBackAll().filter(doomed).whatIfDeleted()
    rerun = by_count(sc, without(write_text, "words.txt", TEXT, doomed)).collect()
    assert_exact(impact, original, rerun)
    assert classes(impact) == by_key(original, rerun)
    # "dog" had 5; without its lines the group of 5 is gone; "fox", "the"... keep or change groups
    assert (5, ["dog"]) in impact.deleted()


def test_inner_join_then_a_sum_per_name(lc, sc, write_text, where):
    users_path, orders_path = write_text("users.csv", USERS), write_text("orders.csv", ORDERS)

    def per_name(ctx, users_file, orders_file):
        users = ctx.textFile(users_file, 2).map(lambda s: s.split(",")).map(lambda f: (f[0], f[1]))
        orders = ctx.textFile(orders_file, 3).map(lambda s: s.split(",")).map(lambda f: (f[1], int(f[2])))
        return orders.join(users, 2).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add, 2)

    totals = per_name(lc, users_path, orders_path)
    original = totals.collect()
    order_lines = where(totals.getLineage()).goBackAll().split()
    orders_point = next(cid for cid, part in order_lines.items() if "o1,u1,10" in part.collect())
    doomed = lambda line: line.startswith("o") and int(line.split(",")[2]) >= 5  # noqa: E731
    impact = order_lines[orders_point].filter(doomed).whatIfDeleted()
    rerun = per_name(sc, users_path, without(write_text, "orders.csv", ORDERS, doomed)).collect()
    assert_exact(impact, original, rerun)
    assert classes(impact) == by_key(original, rerun)
    assert ("alice", 18) in [old for old, _ in impact.changed()]


@pytest.mark.parametrize("how", ["leftOuterJoin", "fullOuterJoin"])
def test_outer_join_pairs_lose_a_side_instead_of_dying(lc, sc, write_text, how, where):
    users_path, orders_path = write_text("users.csv", USERS), write_text("orders.csv", ORDERS)

    def pairs(ctx, users_file, orders_file):
        users = ctx.textFile(users_file, 2).map(lambda s: s.split(",")).map(lambda f: (f[0], f[1]))
        orders = ctx.textFile(orders_file, 3).map(lambda s: s.split(",")).map(lambda f: (f[1], f[0]))
        return getattr(orders, how)(users, 2)

    joined = pairs(lc, users_path, orders_path)
    original = joined.collect()
    doomed = lambda line: line == "u3,carol"  # noqa: E731
    impact = where(joined.getLineage()).goBackAll().filter(doomed).whatIfDeleted()
    rerun = pairs(sc, without(write_text, "users.csv", USERS, doomed), orders_path).collect()
    assert_exact(impact, original, rerun)
    assert impact.changed() == [(("u3", ("o5", "carol")), ("u3", ("o5", None)))]
    assert impact.deleted() == [] and impact.appeared() == []


def test_distinct_values_die_only_with_their_last_record(lc, sc, write_text, where):
    values = ["a", "b", "a", "c", "b", "d", "a", "e"]
    path = write_text("values.txt", values)
    distinct = lc.textFile(path, 3).distinct(2)
    original = distinct.collect()
    doomed = lambda v: v in ("b", "c")  # noqa: E731
    impact = where(distinct.getLineage()).goBackAll().filter(doomed).whatIfDeleted()
    rerun = sc.textFile(without(write_text, "values.txt", values, doomed), 3).distinct(2).collect()
    assert_exact(impact, original, rerun)
    assert sorted(impact.deleted()) == ["b", "c"] and impact.changed() == [] and impact.appeared() == []


def test_union_then_count_and_a_multi_stage_top(lc, sc, write_text, where):
    left_path = write_text("left.txt", TEXT[:5])
    right_path = write_text("right.txt", TEXT[5:])

    def top_words(ctx, a, b):
        both = ctx.textFile(a, 2).union(ctx.textFile(b, 1))
        counts = both.flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add, 2)
        return counts.sortBy(lambda kv: (-kv[1], kv[0]), numPartitions=2)

    ranked = top_words(lc, left_path, right_path)
    original = ranked.take(3)
    doomed = lambda line: "dog" in line.split()  # noqa: E731
    impact = where(ranked.getLineage()).goBackAll().filter(doomed).whatIfDeleted()
    rerun = top_words(sc, without(write_text, "left.txt", TEXT[:5], doomed),
                      without(write_text, "right.txt", TEXT[5:], doomed)).take(3)
    assert_exact(impact, original, rerun)
    assert ("dog", 5) in impact.deleted() and impact.appeared()  # another word enters the top 3

    lines = lc.textFile(left_path, 2).union(lc.textFile(right_path, 1))
    total = lines.count()
    impact = where(lines.getLineage()).goBackAll().filter(doomed).whatIfDeleted()
    assert impact.changed() == [(total, total - sum(doomed(line) for line in TEXT))]


def test_a_run_opened_from_its_folder_gives_the_lineage_classes_and_says_why_not_more(lc, spark, write_text):
    path = write_text("words.txt", TEXT)
    counts = word_count(lc, path)
    counts.collect()
    run = LineageRun(lc.run_dir)
    lin = run.lineage(counts.getLineage().points()[0])
    impact = lin.goBackAll().filter(lambda line: "error" in line).whatIfDeleted()
    assert sorted(impact.dead()) == ERROR_ONLY
    with pytest.raises(ReplayNotPossible, match="cannot be replayed here"):
        impact.changed()


def test_classify_keeps_both_identities_on_random_outputs():
    import random

    rng = random.Random(3)
    for _ in range(300):
        old = [(i, (rng.randrange(5), rng.randrange(3))) for i in range(rng.randrange(8))]
        dead = BitMap64([i for i, _ in old if rng.random() < 0.3])
        reached = BitMap64([i for i, _ in old if i not in dead and rng.random() < 0.4])
        new = [v for i, v in old if i not in dead and i not in reached]
        new += [(rng.randrange(5), rng.randrange(3)) for _ in range(rng.randrange(4))]
        got = classify(old, dead, reached, new)
        assert multiset(got.deleted + [o for o, _ in got.changed] + got.unchanged) == multiset(v for _, v in old)
        assert multiset(got.unchanged + [n for _, n in got.changed] + got.appeared) == multiset(new)
        assert all(o[0] == n[0] for o, n in got.changed)


ACTIONS = {
    "collect": lambda r: r.collect(),
    "count": lambda r: [r.count()],
    "sum": lambda r: [r.sum()],
    "reduce": lambda r: [r.reduce(max)],
    "top": lambda r: r.top(2),
    "takeOrdered": lambda r: r.takeOrdered(2, key=lambda kv: -kv[1]),
    "countByValue": lambda r: sorted(r.countByValue().items()),
    "countByKey": lambda r: sorted(r.countByKey().items()),
    "fold": lambda r: [r.fold(0, add)],
    "aggregate": lambda r: [r.aggregate((0, 0), lambda acc, v: (acc[0] + v, acc[1] + 1),
                                        lambda a, b: (a[0] + b[0], a[1] + b[1]))],
    "maxByKey": lambda r: [r.max(key=lambda kv: (kv[1], kv[0]))],
    "reduceByKeyLocally": lambda r: sorted(r.reduceByKeyLocally(add).items()),
}
VALUES_ONLY = ("sum", "reduce", "fold", "aggregate")
UNORDERED = ("countByValue", "countByKey", "reduceByKeyLocally")


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_every_action_replays_to_what_plain_pyspark_returns(lc, sc, write_text, action, where):
    path = write_text("words.txt", TEXT)
    doomed = lambda line: "the" in line.split()  # noqa: E731

    def lines_and_pairs(ctx, p):
        lines = ctx.textFile(p, 3)
        pairs = lines.flatMap(str.split).map(lambda w: (w[0], len(w)))
        return lines, pairs.values() if action in VALUES_ONLY else pairs

    lines, rdd = lines_and_pairs(lc, path)
    original = ACTIONS[action](rdd)
    impact = where(lines.getLineage()).filter(doomed).whatIfDeleted()
    rerun = ACTIONS[action](lines_and_pairs(sc, without(write_text, "words.txt", TEXT, doomed))[1])
    normal = sorted if action in UNORDERED else list
    old_side = impact.deleted() + [old for old, _ in impact.changed()] + impact.unchanged()
    new_side = impact.unchanged() + [new for _, new in impact.changed()] + impact.appeared()
    assert multiset(normal(old_side)) == multiset(original)
    assert multiset(normal(new_side)) == multiset(rerun)


def test_parallelized_and_parquet_inputs_drop_the_deleted_records_in_a_replay(lc, sc, spark, tmp_path, where):
    numbers = lc.parallelize(range(40), 4)
    by_rest = numbers.map(lambda n: (n % 5, n)).reduceByKey(add, 2)
    original = by_rest.collect()
    impact = where(numbers.getLineage()).filter(lambda n: n % 10 == 3).whatIfDeleted()
    kept = [n for n in range(40) if n % 10 != 3]
    rerun = sc.parallelize(kept, 4).map(lambda n: (n % 5, n)).reduceByKey(add).collect()
    assert_exact(impact, original, rerun)
    assert impact.changed() == [((3, sum(range(3, 40, 5))), (3, sum(n for n in range(3, 40, 5) if n % 10 != 3)))]

    path = str(tmp_path / "people.parquet")
    rows = [(i, f"name{i}", i % 3) for i in range(30)]
    spark.createDataFrame(rows, ["id", "name", "grp"]).repartition(3).write.parquet(path)
    people = lc.parquet(path)
    per_group = people.map(lambda r: (r.grp, 1)).reduceByKey(add, 2)
    original = per_group.collect()
    impact = where(people.getLineage()).filter(lambda r: r.id < 6).whatIfDeleted()
    rerun = [(g, sum(1 for i, _, gg in rows if gg == g and i >= 6)) for g in range(3)]
    assert_exact(impact, original, rerun)
