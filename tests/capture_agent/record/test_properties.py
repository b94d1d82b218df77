"""Property test: random small pipelines, checked against a brute-force lineage interpreter.

The interpreter runs the same pipeline on Python lists where every record carries the set of
input records it came from (why-provenance: a copy keeps its input's set, a group or join the
union of its members'). For every output record the backward trace must give exactly that set,
and for every input record the forward trace exactly the outputs whose sets hold it.
"""

from __future__ import annotations

import os
from collections import Counter
from operator import add
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.spark

Rec = tuple[Any, frozenset]

OPS = ["mapValues", "rekey", "filter", "flatMap", "reduceByKey", "groupByKey", "distinct", "join",
       "leftOuterJoin", "union", "repartition", "coalesce", "sortByKey", "partitionBy", "subtractByKey",
       "cogroup", "intersection", "subtract", "cartesian", "cache", "mapPartitions", "aggregateByKey", "zip"]


def _group(recs: list[Rec]) -> dict[Any, list[Rec]]:
    groups: dict[Any, list[Rec]] = {}
    for (k, v), lineage in recs:
        groups.setdefault(k, []).append((v, lineage))
    return groups


def _union(items: list[Rec]) -> frozenset:
    out: frozenset = frozenset()
    for _, lineage in items:
        out |= lineage
    return out


def reference(op: str, recs: list[Rec], other: list[Rec]) -> list[Rec]:
    """The operation on records with lineage sets (order does not matter here)."""
    if op == "mapValues":
        return [((k, v + 1), lin) for (k, v), lin in recs]
    if op == "rekey":
        return [((k % 3, v), lin) for (k, v), lin in recs]
    if op == "filter":
        return [((k, v), lin) for (k, v), lin in recs if v % 2 == 0]
    if op == "flatMap":
        return [((k2, v), lin) for (k, v), lin in recs for k2 in ([k, k + 1] if v % 3 == 0 else [k])]
    if op == "reduceByKey":
        return [((k, sum(v for v, _ in items)), _union(items)) for k, items in _group(recs).items()]
    if op == "groupByKey":
        return [((k, len(items)), _union(items)) for k, items in _group(recs).items()]
    if op == "distinct":
        seen: dict[Any, frozenset] = {}
        for value, lin in recs:
            seen[value] = seen.get(value, frozenset()) | lin
        return list(seen.items())
    if op in ("join", "leftOuterJoin"):
        right = _group(other)
        out: list[Rec] = []
        for k, items in _group(recs).items():
            matches = right.get(k, [])
            if not matches and op == "leftOuterJoin":
                out.extend(((k, v), lin) for v, lin in items)
            for v, lin in items:
                for w, rlin in matches:
                    out.append(((k, v + w), lin | rlin))
        return out
    if op == "union":
        return recs + other
    if op == "subtractByKey":
        keys = {k for (k, _), _ in other}
        return [((k, v), lin) for (k, v), lin in recs if k not in keys]
    if op == "cogroup":
        left, right = _group(recs), _group(other)
        return [((k, len(left.get(k, [])) * 10 + len(right.get(k, []))),
                 _union(left.get(k, [])) | _union(right.get(k, []))) for k in set(left) | set(right)]
    if op == "intersection":
        both: dict[Any, frozenset] = {}
        right_values = {value for value, _ in other}
        for value, lin in recs + other:
            if value in right_values and any(v == value for v, _ in recs):
                both[value] = both.get(value, frozenset()) | lin
        return list(both.items())
    if op == "subtract":
        right_values = {value for value, _ in other}
        return [(value, lin) for value, lin in recs if value not in right_values]
    if op == "cartesian":
        return [((k, v + w), lin | rlin) for (k, v), lin in recs for (_, w), rlin in other]
    if op == "mapPartitions":
        return [((k, v * 2), lin) for (k, v), lin in recs]
    if op == "zip":  # each record with itself times ten
        return [((k, v * 11), lin) for (k, v), lin in recs]
    if op == "aggregateByKey":
        return [((k, max(v for v, _ in items)), _union(items)) for k, items in _group(recs).items()]
    return recs  # repartition, coalesce, sortByKey, partitionBy, cache: same records


def captured(op: str, rdd: Any, other: Any) -> Any:
    if op == "mapValues":
        return rdd.mapValues(lambda v: v + 1)
    if op == "rekey":
        return rdd.map(lambda kv: (kv[0] % 3, kv[1]))
    if op == "filter":
        return rdd.filter(lambda kv: kv[1] % 2 == 0)
    if op == "flatMap":
        return rdd.flatMap(lambda kv: [(k, kv[1]) for k in ([kv[0], kv[0] + 1] if kv[1] % 3 == 0 else [kv[0]])])
    if op == "reduceByKey":
        return rdd.reduceByKey(add)
    if op == "groupByKey":
        return rdd.groupByKey().mapValues(len)
    if op == "distinct":
        return rdd.distinct()
    if op == "join":
        return rdd.join(other).mapValues(lambda vw: vw[0] + vw[1])
    if op == "leftOuterJoin":
        return rdd.leftOuterJoin(other).mapValues(lambda vw: vw[0] + (vw[1] or 0))
    if op == "union":
        return rdd.union(other)
    if op == "repartition":
        return rdd.repartition(3)
    if op == "coalesce":
        return rdd.coalesce(1)
    if op == "sortByKey":
        return rdd.sortByKey()
    if op == "partitionBy":
        return rdd.partitionBy(2)
    if op == "subtractByKey":
        return rdd.subtractByKey(other)
    if op == "cogroup":
        return rdd.cogroup(other).mapValues(lambda ab: len(ab[0]) * 10 + len(ab[1]))
    if op == "intersection":
        return rdd.intersection(other)
    if op == "subtract":
        return rdd.subtract(other)
    if op == "cartesian":
        return rdd.cartesian(other).map(lambda p: (p[0][0], p[0][1] + p[1][1]))
    if op == "cache":
        return rdd.cache()
    if op == "mapPartitions":
        return rdd.mapPartitions(lambda it: ((k, v * 2) for k, v in it))
    if op == "zip":  # cached: both sides read the same records in the same order
        kept = rdd.cache()
        return kept.zip(kept.mapValues(lambda v: v * 10)).map(lambda p: (p[0][0], p[0][1] + p[1][1]))
    if op == "aggregateByKey":
        return rdd.aggregateByKey(-1, max, max)
    raise AssertionError(op)


pairs = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9)), max_size=10)


@settings(max_examples=int(os.environ.get("LINEAGE_PROPERTY_EXAMPLES", "20")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(left=pairs, right=pairs, ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=3),
       n_left=st.integers(1, 3), n_right=st.integers(1, 2))
@example(left=[(0, 6)], right=[(1, 9)], ops=["subtractByKey", "union"], n_left=1, n_right=1)
@example(left=[(0, 6), (1, 3), (0, 2)], right=[], ops=["zip", "reduceByKey"], n_left=2, n_right=1)
def test_random_pipelines_trace_like_the_brute_force_interpreter(lc, left, right, ops, n_left, n_right):
    check_pipeline(lc, left, right, ops, n_left, n_right)


# spilling costs a spill and a merge of 59 buckets per task: fewer examples
@settings(max_examples=int(os.environ.get("LINEAGE_PROPERTY_SPILL_EXAMPLES", "6")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(left=pairs, right=pairs, ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=3),
       n_left=st.integers(1, 3), n_right=st.integers(1, 2))
@example(left=[(0, 6), (1, 2), (0, 3)], right=[(1, 9), (0, 1)], ops=["join", "reduceByKey"], n_left=2, n_right=1)
def test_random_pipelines_that_spill_trace_like_the_interpreter(lc, tiny_worker_memory, left, right, ops,
                                                                n_left, n_right):
    check_pipeline(lc, left, right, ops, n_left, n_right)


def check_pipeline(lc: Any, left: list[tuple[int, int]], right: list[tuple[int, int]], ops: list[str],
                   n_left: int, n_right: int) -> None:
    a = lc.parallelize([("a", i, k, v) for i, (k, v) in enumerate(left)], n_left).map(lambda r: (r[2], r[3]))
    b = lc.parallelize([("b", i, k, v) for i, (k, v) in enumerate(right)], n_right).map(lambda r: (r[2], r[3]))
    ref_a: list[Rec] = [((k, v), frozenset({("a", i)})) for i, (k, v) in enumerate(left)]
    ref_b: list[Rec] = [((k, v), frozenset({("b", i)})) for i, (k, v) in enumerate(right)]
    rdd, ref = a, ref_a
    for op in ops:
        rdd, ref = captured(op, rdd, b), reference(op, ref, ref_b)

    results = rdd.collect()
    assert Counter(results) == Counter(value for value, _ in ref)
    lin = rdd.getLineage()
    ids = lin.ids()
    assert len(ids) == len(results)
    [point] = lin.points() or [None]
    traced = []
    backward: dict[int, frozenset] = {}
    for record_id, value in zip(ids, results, strict=True):
        sources = frozenset((r[0], r[1]) for r in lc.lineage(point, [record_id]).goBackAll().collect())
        backward[record_id] = sources
        traced.append((value, sources))
    assert Counter(traced) == Counter(ref), ops

    # forward from every input record reaches exactly the outputs whose lineage holds it
    if results:
        inputs = lin.goBackAll()
        for part in inputs.split().values():
            for input_id, record in part.items():
                tag = (record[0], record[1])
                reached = lc.lineage(part.points()[0], [input_id])
                reached._scope = lin._scope
                forward = set(reached.goNextAll().ids())
                assert forward == {i for i, s in backward.items() if tag in s}, (ops, tag)
