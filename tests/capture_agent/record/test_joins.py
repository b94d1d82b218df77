"""Joins, cogroup and multi-stage pipelines: traces equal the rows with the key on each side."""

from __future__ import annotations

from operator import add

import pytest

from tests.capture_agent.record.oracle import as_local, lines_with_offsets, positions_of

pytestmark = pytest.mark.spark

USERS = ["u1,alice", "u2,bob", "u3,carol", "u4,dave", "u2,bobby"]
ORDERS = ["o1,u1,10", "o2,u2,5", "o3,u1,7", "o4,u9,1", "o5,u3,2", "o6,u2,4", "o7,u1,1"]


@pytest.fixture
def tables(write_text):
    return write_text("users.csv", USERS), write_text("orders.csv", ORDERS)


def keyed(lc, users_path, orders_path):
    users = lc.textFile(users_path, 2).map(lambda s: s.split(",")).map(lambda f: (f[0], f[1]))
    orders = lc.textFile(orders_path, 3).map(lambda s: s.split(",")).map(lambda f: (f[1], int(f[2])))
    return users, orders


def plain_keyed(sc, users_path, orders_path):
    users = sc.textFile(users_path, 2).map(lambda s: s.split(",")).map(lambda f: (f[0], f[1]))
    orders = sc.textFile(orders_path, 3).map(lambda s: s.split(",")).map(lambda f: (f[1], int(f[2])))
    return users, orders


def sides(lin):
    """Backward trace split into {input file basename: {offset}}."""
    out: dict[str, set[int]] = {}
    for part in lin.goBackAll().split().values():
        for path, offset in as_local(part.positions()):
            out.setdefault(path.rsplit("/", 1)[1], set()).add(offset)
    return out


def key_rows(path, key, field):
    return {off for off, line in lines_with_offsets(path) if line.split(",")[field] == key}


@pytest.mark.parametrize("how", ["join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin"])
def test_joins_return_pyspark_results(lc, sc, tables, how):
    users, orders = keyed(lc, *tables)
    plain_users, plain_orders = plain_keyed(sc, *tables)
    assert getattr(users, how)(orders).collect() == getattr(plain_users, how)(plain_orders).collect()


@pytest.mark.parametrize("how", ["join", "leftOuterJoin", "rightOuterJoin", "fullOuterJoin"])
def test_each_join_output_traces_to_exactly_one_row_per_side(lc, tables, how):
    users_path, orders_path = tables
    users, orders = keyed(lc, *tables)
    joined = getattr(users, how)(orders)
    results = joined.collect()
    lin = joined.getLineage()
    for record_id, (key, (name, amount)) in zip(lin.ids(), results, strict=True):
        traced = sides(lc.lineage(lin.points()[0], [record_id]))
        expected = {}
        if name is not None:
            [off] = [o for o, line in lines_with_offsets(users_path) if line == f"{key},{name}"]
            expected["users.csv"] = {off}
        if amount is not None:
            candidates = {o for o, line in lines_with_offsets(orders_path)
                          if line.split(",")[1] == key and int(line.split(",")[2]) == amount}
            assert len(candidates) == 1
            expected["orders.csv"] = candidates
        assert traced == expected, (key, name, amount)


def test_join_on_a_key_traces_to_all_rows_with_that_key_on_each_side(lc, tables):
    users_path, orders_path = tables
    users, orders = keyed(lc, *tables)
    joined = users.join(orders)
    joined.collect()
    for key in ("u1", "u2", "u3"):
        traced = sides(joined.getLineage().filter(lambda kv, k=key: kv[0] == k))
        assert traced == {"users.csv": key_rows(users_path, key, 0), "orders.csv": key_rows(orders_path, key, 1)}


def test_outer_join_with_missing_keys_traces_to_one_side_only(lc, tables):
    users_path, orders_path = tables
    users, orders = keyed(lc, *tables)
    full = users.fullOuterJoin(orders)
    results = full.collect()
    assert ("u4", ("dave", None)) in results and ("u9", (None, 1)) in results
    lin = full.getLineage()
    assert sides(lin.filter(lambda kv: kv[0] == "u4")) == {"users.csv": key_rows(users_path, "u4", 0)}
    assert sides(lin.filter(lambda kv: kv[0] == "u9")) == {"orders.csv": key_rows(orders_path, "u9", 1)}


def test_forward_from_an_order_row_reaches_only_its_join_outputs(lc, tables):
    users, orders = keyed(lc, *tables)
    joined = users.join(orders)
    joined.collect()
    src = joined.getLineage().goBackAll().split()
    order_point = [cid for cid in src if "orders" in lc.store.point(cid).layout.source][0]
    row = src[order_point].filter(lambda line: line == "o2,u2,5")
    assert row.count() == 1
    assert sorted(row.goNextAll().collect()) == [("u2", ("bob", 5)), ("u2", ("bobby", 5))]
    user_point = [cid for cid in src if "users" in lc.store.point(cid).layout.source][0]
    bob = src[user_point].filter(lambda line: line == "u2,bob")
    assert sorted(bob.goNextAll().collect()) == [("u2", ("bob", 4)), ("u2", ("bob", 5))]


def test_two_shuffles_and_a_join(lc, sc, tables):
    """Total per user name: reduceByKey on orders, distinct users, join, then reduceByKey again."""
    users_path, orders_path = tables
    users, orders = keyed(lc, *tables)
    totals = orders.reduceByKey(add)
    per_name = users.join(totals).map(lambda kv: (kv[1][0][0], kv[1][1])).reduceByKey(add)
    plain_users, plain_orders = plain_keyed(sc, *tables)
    plain = plain_users.join(plain_orders.reduceByKey(add)).map(lambda kv: (kv[1][0][0], kv[1][1])).reduceByKey(add)
    result = per_name.collect()
    assert result == plain.collect()
    lin = per_name.getLineage()
    # names starting with "b" come from u2 (bob, bobby): all u2 rows on both sides
    traced = sides(lin.filter(lambda kv: kv[0] == "b"))
    assert traced == {"users.csv": key_rows(users_path, "u2", 0), "orders.csv": key_rows(orders_path, "u2", 1)}
    # "a" (alice, u1): alice's row and u1's orders
    traced = sides(lin.filter(lambda kv: kv[0] == "a"))
    assert traced == {"users.csv": key_rows(users_path, "u1", 0), "orders.csv": key_rows(orders_path, "u1", 1)}
    # forward from one order of u1 reaches only "a"
    src = lin.goBackAll().split()
    order_point = [cid for cid in src if "orders" in lc.store.point(cid).layout.source][0]
    assert src[order_point].filter(lambda line: line == "o3,u1,7").goNextAll().collect() == [("a", 18)]


def test_join_of_co_partitioned_aggregates(lc, sc, tables):
    """Both sides reduced with the same partitioner: PySpark keeps partitions aligned."""
    users_path, orders_path = tables
    users, orders = keyed(lc, *tables)
    counts = users.mapValues(lambda _: 1).reduceByKey(add, 2)
    totals = orders.reduceByKey(add, 2)
    joined = counts.join(totals)
    plain_users, plain_orders = plain_keyed(sc, *tables)
    plain = plain_users.mapValues(lambda _: 1).reduceByKey(add, 2).join(plain_orders.reduceByKey(add, 2))
    assert joined.getNumPartitions() == plain.getNumPartitions()
    assert joined.collect() == plain.collect()
    traced = sides(joined.getLineage().filter(lambda kv: kv[0] == "u2"))
    assert traced == {"users.csv": key_rows(users_path, "u2", 0), "orders.csv": key_rows(orders_path, "u2", 1)}


def test_cogroup_traces_each_side(lc, sc, tables):
    users_path, orders_path = tables
    users, orders = keyed(lc, *tables)
    grouped = users.cogroup(orders)
    captured = [(k, (list(a), list(b))) for k, (a, b) in grouped.collect()]
    plain_users, plain_orders = plain_keyed(sc, *tables)
    assert captured == [(k, (list(a), list(b))) for k, (a, b) in plain_users.cogroup(plain_orders).collect()]
    traced = sides(grouped.getLineage().filter(lambda kv: kv[0] == "u1"))
    assert traced == {"users.csv": key_rows(users_path, "u1", 0), "orders.csv": key_rows(orders_path, "u1", 1)}


def test_self_join_traces_both_uses_of_one_input(lc, sc, tables):
    _, orders_path = tables
    orders = lc.textFile(orders_path, 2).map(lambda s: s.split(",")).map(lambda f: (f[1], f[0]))
    pairs = orders.join(orders).filter(lambda kv: kv[1][0] < kv[1][1])
    plain = sc.textFile(orders_path, 2).map(lambda s: s.split(",")).map(lambda f: (f[1], f[0]))
    assert pairs.collect() == plain.join(plain).filter(lambda kv: kv[1][0] < kv[1][1]).collect()
    lin = pairs.getLineage().filter(lambda kv: kv[1] == ("o1", "o3"))
    assert as_local(lin.goBackAll().positions()) == positions_of(orders_path, lambda s: s[:2] in ("o1", "o3"))


def test_join_of_a_union_traces_each_output_to_its_rows(lc, sc, tables, write_text):
    """A join whose side is a union (two map sides of a union's branches, one of the other side):
    PySpark's results, and each output traces back to the row of each side it pairs, forward too."""
    users_path, orders_path = tables
    more_path = write_text("more_users.csv", ["u9,zed", "u1,alicia"])
    users, orders = keyed(lc, *tables)
    more = lc.textFile(more_path, 1).map(lambda s: s.split(",")).map(lambda f: (f[0], f[1]))
    joined = users.union(more).join(orders)
    plain_users, plain_orders = plain_keyed(sc, *tables)
    plain_more = sc.textFile(more_path, 1).map(lambda s: s.split(",")).map(lambda f: (f[0], f[1]))
    results = joined.collect()
    assert sorted(results) == sorted(plain_users.union(plain_more).join(plain_orders).collect())
    assert ("u9", ("zed", 1)) in results and ("u1", ("alicia", 10)) in results
    lin = joined.getLineage()
    for record_id, (key, (name, amount)) in zip(lin.ids(), results, strict=True):
        traced = sides(lc.lineage(lin.points()[0], [record_id]))
        user_file = "more_users.csv" if name in ("zed", "alicia") else "users.csv"
        path = more_path if user_file == "more_users.csv" else users_path
        assert traced == {user_file: {o for o, line in lines_with_offsets(path) if line == f"{key},{name}"},
                          "orders.csv": {o for o, line in lines_with_offsets(orders_path)
                                         if line.split(",")[1:] == [key, str(amount)]}}, (key, name, amount)
    src = lin.goBackAll().split()
    zed = [src[c] for c in src if "more_users" in lc.store.point(c).layout.source][0].filter(lambda s: s == "u9,zed")
    assert zed.goNextAll().collect() == [("u9", ("zed", 1))]
