"""The combine's shuffle blocks (``worker.shuffle``): every record reaches the reducer PySpark's
partitioner names, with its combiner id beside it, whatever the key's type and the batch sizes."""

from __future__ import annotations

import io
import os
from array import array

import pytest
from pyspark.core.rdd import portable_hash
from pyspark.serializers import CPickleSerializer, read_long

from capture_agent.record.worker import shuffle
from capture_agent.record.worker.shuffle import ShuffleSpec, combine_blocks, group_blocks

KEYS = ["a", "word", "", 7, -3, 2**70, None, (1, None), ("x", (2, "y")), 1.5, b"raw", frozenset({1}), True]


def _decoded(stream: list[bytes], serializer: CPickleSerializer) -> list[tuple[int, object, object, int]]:
    """(reducer, key, value, id) of each record, in the order the blocks hold them."""
    assert len(stream) % 2 == 0
    out: list[tuple[int, object, object, int]] = []
    for reducer_bytes, block in zip(stream[::2], stream[1::2], strict=True):
        reducer = read_long(io.BytesIO(reducer_bytes))
        keys, values, ids = serializer.loads(block)
        cids = array("q")
        cids.frombytes(ids)
        assert len(keys) == len(values) == len(cids)
        out.extend((reducer, k, v, c) for k, v, c in zip(keys, values, cids, strict=True))
    return out


@pytest.mark.parametrize("num_partitions", [1, 3, 200])
@pytest.mark.parametrize("direct", [True, False])
def test_records_reach_pyspark_reducers(monkeypatch: pytest.MonkeyPatch, num_partitions: int, direct: bool) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    monkeypatch.setattr(shuffle, "MAX_BATCH", 5)  # many flushes
    func = portable_hash if direct else (lambda k: portable_hash(k) + 1)  # a custom partitioner
    serializer = CPickleSerializer()
    records = [((7 << 32) | i, key, (i, str(key))) for i, key in enumerate(KEYS * 40)]
    got = _decoded(list(combine_blocks(iter(records), ShuffleSpec(num_partitions, func, serializer))), serializer)
    assert sorted(got, key=lambda r: r[3]) == [(func(k) % num_partitions, k, v, c) for c, k, v in records]
    for reducer in range(num_partitions):  # each reducer's records keep the map side's order
        ids = [c for r, _, _, c in got if r == reducer]
        assert ids == sorted(ids)


def test_without_hash_seed_pyspark_error_stays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    with pytest.raises(Exception, match="PYTHONHASHSEED"):
        list(combine_blocks(iter([(0, "a", 1)]), ShuffleSpec(2, portable_hash, CPickleSerializer())))
    assert os.environ.get("PYTHONHASHSEED") is None


@pytest.mark.parametrize("num_partitions", [1, 4])
@pytest.mark.parametrize(("hi", "typecode"), [(3 << 32, "I"), (-1, "q")])
@pytest.mark.parametrize("zero_copy", [True, False])
def test_group_values_keep_their_ids(monkeypatch: pytest.MonkeyPatch, num_partitions: int, hi: int, typecode: str,
                                     zero_copy: bool) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    monkeypatch.setattr(shuffle, "MAX_BATCH", 7)  # keys of 5 or more values go in blocks of their own at first
    serializer = CPickleSerializer()
    records = []
    for i, key in enumerate(KEYS * 5):
        vals = [f"{i}.{j}" for j in range(i % 9 + 1)]
        records.append((key, vals, memoryview(array(typecode, [(i << 4) | j for j in range(len(vals))])).cast("B")))
    spec = ShuffleSpec(num_partitions, portable_hash, serializer, zero_copy)
    stream = list(group_blocks(1, hi, iter(records), spec))
    got = []
    for reducer_bytes, block in zip(stream[::2], stream[1::2], strict=True):
        side, block_hi, keys, value_lists, ids = serializer.loads(block)
        assert (side, block_hi) == (1, hi)
        flat = array(typecode)
        flat.frombytes(ids)
        start = 0
        for key, vals in zip(keys, value_lists, strict=True):
            got.append((read_long(io.BytesIO(reducer_bytes)), key, vals, list(flat[start:start + len(vals)])))
            start += len(vals)
        assert start == len(flat)
    want = [(portable_hash(k) % num_partitions, k, v, list(array(typecode, ids.tobytes()))) for k, v, ids in records]
    assert sorted(got, key=lambda r: r[3]) == want
