"""The shuffle output of a map-side combine or group: PySpark's partitionBy blocks, with the
records' ids beside them instead of inside them.

PySpark's ``partitionBy`` (``add_shuffle_key``) hashes each (key, value) to its reducer, pickles
each reducer's records in batches (a batch grows by half while batches stay under 1 MB) and hands
the JVM (reducer, batch) pairs to shuffle whole. A captured combine used to send
``(key, (value, combiner id))`` through it: the inner tuple and a 64-bit id made the shuffle about
54% larger than plain PySpark's and cost a pickled object per record on both sides. Here the
combine writes the blocks itself (``combine_blocks``), each reducer's batch one tuple
``(keys, values, ids)``: the keys and the values as two lists (no tuple per record, a few bytes
less than plain) and the records' combiner ids as the bytes of one ``array('q')`` (8 bytes a
record, no Python object). The reducer's RDD reads each batch as one object (an unbatched
deserializer) and takes the ids with one ``frombytes`` (``boundary.combine_reducer``).

A group side (groupByKey, the joins, cogroup, subtract, intersection) sent
``(key, (side, values, ids))`` per key; its batches are ``(side, keys, value lists, ids)`` now,
the ids of all the batch's values in one ``array('q')``'s bytes, aligned with the value lists
laid end to end (``group_blocks``; read by ``boundary.group_reducer``).

Which reducer a key goes to is PySpark's own ``partitionFunc(key) % numPartitions``, so the
records land where plain PySpark sends them. With PySpark's default ``portable_hash`` a key that
is neither None nor a tuple is hashed by ``hash`` directly, which is what ``portable_hash``
returns for it, without its check of ``os.environ`` on every call (a third of the bucketing
loop's time); the check is made once per task instead. Shipped to executors by value, like the rest of
``worker``.
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

from pyspark.core.rdd import portable_hash

MAX_BATCH = 1 << 16  # records buffered before the batches are written


class ShuffleSpec(NamedTuple):
    """Where a combine's records go: PySpark's partitioner and the context's batch serializer."""

    num_partitions: int
    partition_func: Callable[[Any], int]
    serializer: Any  # the SparkContext's unbatched serializer (CPickleSerializer): dumps/loads


class _Buckets:
    """Each reducer's pending batch: keys, values and the ids' array, emptied by ``blocks``."""

    def __init__(self, n: int) -> None:
        self.keys: list[list[Any]] = [[] for _ in range(n)]
        self.values: list[list[Any]] = [[] for _ in range(n)]
        self.ids = [array("q") for _ in range(n)]
        self.batch = min(10 * n, 1000)  # PySpark's first batch; it adapts as PySpark's does

    def blocks(self, dumps: Callable[[Any], bytes], head: tuple[Any, ...], adapt: bool = True) -> Iterator[bytes]:
        """(reducer, pickled ``head + (keys, values, ids)``) of every reducer with records; with
        ``adapt``, the next batch grows by half while blocks average under 1 MB (PySpark's rule)."""
        from pyspark.serializers import pack_long

        keys, values, ids = self.keys, self.values, self.ids
        size = flushed = 0
        for b in range(len(keys)):
            if keys[b]:
                block = dumps((*head, keys[b], values[b], ids[b].tobytes()))
                keys[b], values[b], ids[b] = [], [], array("q")
                yield pack_long(b)
                yield block
                size += len(block)
                flushed += 1
        if adapt and flushed:
            avg = (size // flushed) >> 20
            if avg < 1:
                self.batch = min(MAX_BATCH, int(self.batch * 1.5))
            elif avg > 10:
                self.batch = max(int(self.batch / 1.5), 1)


def _direct(func: Callable[[Any], int]) -> bool:
    """Whether keys other than None and tuples may be hashed by ``hash`` (module docstring)."""
    return func is portable_hash and "PYTHONHASHSEED" in os.environ  # else portable_hash raises its error


def combine_blocks(records: Iterable[tuple[int, Any, Any]], spec: ShuffleSpec) -> Iterator[bytes]:
    """``(combiner id, key, value)`` records as the byte strings PySpark's PairwiseRDD reads:
    a reducer number (``pack_long``), then its batch pickled, for every batch."""
    n, func, dumps = spec.num_partitions, spec.partition_func, spec.serializer.dumps
    direct, h = _direct(func), hash
    buckets = _Buckets(n)
    keys, values, ids = buckets.keys, buckets.values, buckets.ids
    c = 0
    for cid, key, value in records:
        b = (h(key) if direct and key is not None and not isinstance(key, tuple) else func(key)) % n
        keys[b].append(key)
        values[b].append(value)
        ids[b].append(cid)
        c += 1
        if c > buckets.batch:
            yield from buckets.blocks(dumps, ())
            c = 0
    yield from buckets.blocks(dumps, (), adapt=False)


def group_blocks(side: int, records: Iterable[tuple[Any, list[Any], Any]], spec: ShuffleSpec) -> Iterator[bytes]:
    """A group side's ``(key, values, their ids)`` records (the ids: a buffer of int64s, one per
    value) as PairwiseRDD's byte strings, as ``combine_blocks``; a batch counts values."""
    n, func, dumps = spec.num_partitions, spec.partition_func, spec.serializer.dumps
    direct, h = _direct(func), hash
    buckets = _Buckets(n)
    keys, values, ids = buckets.keys, buckets.values, buckets.ids
    c = 0
    for key, vals, key_ids in records:
        b = (h(key) if direct and key is not None and not isinstance(key, tuple) else func(key)) % n
        keys[b].append(key)
        values[b].append(vals)
        ids[b].frombytes(key_ids)
        c += len(vals)
        if c > buckets.batch:
            yield from buckets.blocks(dumps, (side,))
            c = 0
    yield from buckets.blocks(dumps, (side,), adapt=False)
