"""Record ids split by partition, against the ids grouped one by one."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pyroaring import BitMap64

from capture_agent.record.storage.ids import LOW_MASK, SHIFT, in_partition, lift, split_by_partition

positions = st.one_of(st.integers(0, 2_000), st.integers(0, LOW_MASK))
ids = st.lists(st.tuples(st.integers(0, 6), positions), max_size=300).map(
    lambda pairs: [(part << SHIFT) | pos for part, pos in pairs])


@settings(deadline=None)  # two cores shared with Spark tests: a deadline measures the machine's load
@given(ids)
def test_split_by_partition_gives_each_partitions_positions_in_order(record_ids):
    expected: dict[int, list[int]] = {}
    for record_id in sorted(set(record_ids)):
        expected.setdefault(record_id >> SHIFT, []).append(record_id & LOW_MASK)
    split = [(part, list(bm)) for part, bm in split_by_partition(BitMap64(record_ids))]
    assert split == sorted(expected.items())
    assert BitMap64().union(*(lift(part, bm) for part, bm in split_by_partition(BitMap64(record_ids)))) == BitMap64(
        record_ids)
    for part in range(8):
        assert list(in_partition(BitMap64(record_ids), part)) == [(part << SHIFT) | p for p in expected.get(part, [])]


def test_split_by_partition_of_the_extremes():
    edges = BitMap64([0, LOW_MASK, 1 << SHIFT, (5 << SHIFT) | LOW_MASK])
    assert [(part, list(bm)) for part, bm in split_by_partition(edges)] == [(0, [0, LOW_MASK]), (1, [0]),
                                                                            (5, [LOW_MASK])]


@given(st.lists(st.one_of(st.integers(0, (1 << 63) - 1), st.integers(0, 1 << 20), st.none()), max_size=200),
       st.booleans())
def test_a_frames_single_ids_serialize_as_one_id_bitmaps(values, as_float):
    """The hidden id columns of a collected frame (``worker.frames.id_sets``, built for all rows at
    once) give what pyroaring serializes for each id alone; None is the empty set."""
    from capture_agent.record.worker.frames import EMPTY, id_sets

    rows = [(None if v is None else float(v) if as_float and v < (1 << 53) else v,) for v in values]
    expected = [EMPTY if v is None else bytes(BitMap64([v]).serialize()) for v in values]
    assert id_sets(rows, [False]) == [expected]
