"""The map-side combine's state (``worker/combine.py``): slots, then key tags past TAG_PAST keys;
keys whose hashes are equal, or fall in one bucket, keep lineage of their own, in tasks that
spill too."""

from __future__ import annotations

import random
from array import array
from operator import add
from typing import Any

import pytest

from capture_agent.record.storage.layouts.base import u32_column
from capture_agent.record.worker import combine
from capture_agent.record.worker.combine import FIRST, SIDE, CombineState, slots_of_tags
from tests.capture_agent.record.test_spill import spilled, upstream

# hash(-1) == hash(-2) in CPython, so the tuples' hashes are equal too; 5 + 2**25 and 5 + 2**26
# hash apart but share 5's bucket
CLASHING = [-1, -2, (1, -1), (1, -2), 5, 5 + 2**25, 5 + 2**26]


def test_slots_follow_first_records_and_later_records_find_their_key():
    records = [7 | FIRST, SIDE | FIRST, 7, 3 | FIRST, SIDE, 3, 7, (SIDE + 1) | FIRST, SIDE + 1, SIDE]
    assert slots_of_tags(u32_column(array("I", records))).to_pylist() == [0, 1, 0, 2, 1, 2, 0, 3, 3, 1]


def test_slots_of_first_records_only():
    assert slots_of_tags(u32_column(array("I", [9 | FIRST, 4 | FIRST]))).to_pylist() == [0, 1]


def test_records_tagged_after_slots_continue_the_slots():
    keys, head, taken, side = combine.start_tagging({7: 0, -1: 1, -2: 2}, [10, 11, 12])
    assert list(keys.items()) == [(7, 10), (-1, 11), (-2, 12)]
    assert head[2] == SIDE and side == {-2: SIDE}  # -2 hashes as -1 does
    tags = array("I", [SIDE, 40 | FIRST, head[1], 40, head[0]])
    state = CombineState(keys, None, array("I", [0, 1, 0, 2]), head, tags, None)
    assert state.record_slots().to_pylist() == [0, 1, 0, 2, 2, 3, 1, 3, 0]


def clashing_records(n: int) -> list[tuple[Any, int]]:
    """(key, record number) in two partitions of n // 2 records: a few keys, each repeated, in
    random order, and from record 1,200 of each partition on the keys that clash with them too
    (past the first check after 1,000 records, where tasks start tagging: new keys then meet
    taken buckets in the stage's own loop)."""
    rng = random.Random(5)
    early = [*range(20), "a", "b", -1, (1, -1), 5]
    late = [*early, *CLASHING]
    return [(rng.choice(late if i % (n // 2) >= 1200 else early), i) for i in range(n)]


def assert_each_key_traces_to_its_records(lc: Any, sc: Any, data: list[tuple[Any, int]]) -> Any:
    """Checks the word count's results and each clashing key's backward trace; returns the lineage."""
    sums = lc.parallelize(data, 2).reduceByKey(add)
    assert sorted(sums.collect(), key=repr) == sorted(sc.parallelize(data, 2).reduceByKey(add).collect(), key=repr)
    lin = sums.getLineage()
    for key in CLASHING:
        traced = lin.filter(lambda kv, k=key: kv[0] == k).goBackAll().collect()
        assert sorted(traced) == [kv for kv in data if kv[0] == key], key
    return lin


@pytest.fixture(params=[0, 10], ids=["tags-from-the-second-record", "tags-after-slots"])
def tag_past(request: Any, monkeypatch: pytest.MonkeyPatch) -> int:
    """Combine tasks tag their keys from their first check on (0), or once they hold 10 keys (the
    check after 1,000 records): stage functions read TAG_PAST when the driver builds them."""
    monkeypatch.setattr(combine, "TAG_PAST", request.param)
    return int(request.param)


@pytest.mark.spark
def test_keys_with_equal_hashes_or_one_bucket_trace_to_their_own_records(lc, sc, tag_past):
    assert hash(-1) == hash(-2) and hash((1, -1)) == hash((1, -2))
    assert_each_key_traces_to_its_records(lc, sc, clashing_records(5000))


@pytest.mark.spark
def test_few_keys_keep_slots_and_trace_exactly(lc, sc):
    assert_each_key_traces_to_its_records(lc, sc, clashing_records(400))


@pytest.mark.spark
def test_clashing_keys_trace_exactly_in_tasks_that_spill(lc, sc, tiny_worker_memory, tag_past):
    # the first check (second record) spills, later ones when memory grew: each run tags its keys afresh
    lin = assert_each_key_traces_to_its_records(lc, sc, clashing_records(5000))
    assert spilled(lc, upstream(lc, lin, "combiner"))
