"""Record ids split by partition, against the ids grouped one by one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from pyroaring import BitMap64

from capture_agent.record.storage.ids import LOW_MASK, SHIFT, lift, split_by_partition

positions = st.one_of(st.integers(0, 2_000), st.integers(0, LOW_MASK))
ids = st.lists(st.tuples(st.integers(0, 6), positions), max_size=300).map(
    lambda pairs: [(part << SHIFT) | pos for part, pos in pairs])


@given(ids)
def test_split_by_partition_gives_each_partitions_positions_in_order(record_ids):
    expected: dict[int, list[int]] = {}
    for record_id in sorted(set(record_ids)):
        expected.setdefault(record_id >> SHIFT, []).append(record_id & LOW_MASK)
    split = [(part, list(bm)) for part, bm in split_by_partition(BitMap64(record_ids))]
    assert split == sorted(expected.items())
    assert BitMap64().union(*(lift(part, bm) for part, bm in split_by_partition(BitMap64(record_ids)))) == BitMap64(
        record_ids)


def test_split_by_partition_of_the_extremes():
    edges = BitMap64([0, LOW_MASK, 1 << SHIFT, (5 << SHIFT) | LOW_MASK])
    assert [(part, list(bm)) for part, bm in split_by_partition(edges)] == [(0, [0, LOW_MASK]), (1, [0]),
                                                                            (5, [LOW_MASK])]
