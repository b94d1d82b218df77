"""Property test of what-ifs: random small pipelines (the operators of ``test_properties``), random
records deleted from one input, and the what-if's four classes checked against the brute-force
interpreter run on the records that remain: ``deleted + old of changed + unchanged`` is the
original output and ``unchanged + new of changed + appeared`` the output without the deleted
records, as multisets."""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.capture_agent.record.test_properties import OPS, Rec, captured, pairs, reference

pytestmark = pytest.mark.spark


@settings(max_examples=int(os.environ.get("LINEAGE_WHATIF_EXAMPLES", "12")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(left=pairs, right=pairs, ops=st.lists(st.sampled_from(OPS), min_size=1, max_size=3),
       n_left=st.integers(1, 3), n_right=st.integers(1, 2), doomed=st.sets(st.integers(0, 9), min_size=1))
@example(left=[(0, 1), (0, 2), (1, 3)], right=[(0, 5)], ops=["reduceByKey", "rekey", "groupByKey"], n_left=2,
         n_right=1, doomed={1})
@example(left=[(0, 1), (1, 2)], right=[(0, 5), (1, 6)], ops=["join", "reduceByKey"], n_left=1, n_right=2,
         doomed={0})
@example(left=[(0, 0)], right=[], ops=["union", "join"], n_left=1, n_right=1, doomed={0})  # a join of a union
def test_random_pipelines_what_if_like_the_interpreter_on_what_remains(lc: Any, left: list[tuple[int, int]],
                                                                      right: list[tuple[int, int]], ops: list[str],
                                                                      n_left: int, n_right: int,
                                                                      doomed: set[int]) -> None:
    source = lc.parallelize([("a", i, k, v) for i, (k, v) in enumerate(left)], n_left)
    other = lc.parallelize([("b", i, k, v) for i, (k, v) in enumerate(right)], n_right).map(lambda r: (r[2], r[3]))
    rdd = source.map(lambda r: (r[2], r[3]))
    ref_b: list[Rec] = [((k, v), frozenset()) for k, v in right]
    remaining: list[Rec] = [((k, v), frozenset()) for i, (k, v) in enumerate(left) if i not in doomed]
    for op in ops:
        rdd, remaining = captured(op, rdd, other), reference(op, remaining, ref_b)
    original = rdd.collect()
    chosen = source.getLineage().filter(lambda r: r[1] in doomed)
    if not chosen.ids():
        return  # nothing of ``left`` is deleted
    output = max((p for p in lc.capture_points() if p.kind == "output"), key=lambda p: p.seq)  # the collect's
    impact = chosen.whatIfDeleted(output.capture_id)
    old_side = impact.deleted() + [old for old, _ in impact.changed()] + impact.unchanged()
    new_side = impact.unchanged() + [new for _, new in impact.changed()] + impact.appeared()
    assert Counter(map(repr, old_side)) == Counter(map(repr, original))
    assert Counter(map(repr, new_side)) == Counter(repr(value) for value, _ in remaining)
