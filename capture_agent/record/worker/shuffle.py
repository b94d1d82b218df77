"""The shuffle output of a map-side combine or group: PySpark's partitionBy blocks, with the
records' ids beside them instead of inside them.

PySpark's ``partitionBy`` (``add_shuffle_key``) hashes each (key, value) to its reducer, pickles
each reducer's records in batches (a batch grows by half while batches stay under 1 MB) and hands
the JVM (reducer, batch) pairs to shuffle whole. A captured combine used to send
``(key, (value, combiner id))`` through it: the inner tuple and a 64-bit id made the shuffle about
54% larger than plain PySpark's and cost a pickled object per record on both sides. The map
sides now write the blocks themselves, and the reducer's RDD reads each batch as one object (an
unbatched deserializer) and takes its ids with one ``frombytes``:

- a combine's batch (``combine_blocks``, read by ``boundary.combine_reducer``) is
  ``(keys, values, ids)``: keys and values as two lists (no tuple per record: a few bytes less
  than plain) and the records' combiner ids as one ``array('q')``'s bytes (no Python object);
- a group side's (groupByKey, the joins, cogroup, subtract, intersection; ``group_blocks``, read
  by ``boundary.group_reducer``) is ``(side, hi, keys, value lists, ids)``: the ids of all the
  batch's values, the lists laid end to end, as the uint32 positions of map partition
  ``hi >> 32`` (``hi`` -1: int64 global ids, from a task that spilled). The reducer turns
  positions into ids with a few strided byte copies. A key with more values than a batch (a hot
  key) goes in a block of its own.

A batch holds at most ``MAX_BATCH`` records (PySpark's also flushes when the worker's memory is
past half its limit, which a large map side's state always is), and the id arrays are pickled
from their own buffers (protocol 5's ``PickleBuffer``) when the context's serializer is pickle.

Which reducer a key goes to is PySpark's own ``partitionFunc(key) % numPartitions``, so the
records land where plain PySpark sends them. With PySpark's default ``portable_hash`` a key that
is neither None nor a tuple is hashed by ``hash`` directly, which is what ``portable_hash``
returns for it, without its check of ``os.environ`` on every call (a third of the bucketing
loop's time); the check is made once per task instead. Shipped to executors by value, like the
rest of ``worker``.
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
    zero_copy: bool = False  # it pickles with protocol 5: an array is pickled from its own buffer


def shuffle_spec(sc: Any, num_partitions: int, partition_func: Callable[[Any], int]) -> ShuffleSpec:
    """The spec of a shuffle of ``sc`` (on the driver)."""
    from pyspark.serializers import CloudPickleSerializer, CPickleSerializer

    serializer = sc._unbatched_serializer
    return ShuffleSpec(num_partitions, partition_func, serializer,
                       type(serializer) in (CPickleSerializer, CloudPickleSerializer))


def _buffer(ids: Any, zero_copy: bool) -> Any:
    """An id array as it is pickled: its own buffer (protocol 5), else a copy as bytes."""
    if zero_copy:
        import pickle

        return pickle.PickleBuffer(ids)
    return bytes(ids)


class _Buckets:
    """Each reducer's pending batch: keys, values and the ids' array, emptied by ``blocks``."""

    def __init__(self, spec: ShuffleSpec, typecode: str = "q") -> None:
        n = spec.num_partitions
        self.keys: list[list[Any]] = [[] for _ in range(n)]
        self.values: list[list[Any]] = [[] for _ in range(n)]
        self.typecode = typecode
        self.ids = [array(typecode) for _ in range(n)]
        self.batch = min(10 * n, 1000)  # PySpark's first batch; it adapts as PySpark's does
        self.dumps = spec.serializer.dumps
        self.zero_copy = spec.zero_copy

    def blocks(self, head: tuple[Any, ...], adapt: bool = True) -> Iterator[bytes]:
        """(reducer, pickled ``head + (keys, values, ids)``) of every reducer with records; with
        ``adapt``, the next batch grows by half while blocks average under 1 MB (PySpark's rule)."""
        from pyspark.serializers import pack_long

        keys, values, ids = self.keys, self.values, self.ids
        size = flushed = 0
        for b in range(len(keys)):
            if keys[b]:
                block = self.dumps((*head, keys[b], values[b], _buffer(ids[b], self.zero_copy)))
                keys[b], values[b], ids[b] = [], [], array(self.typecode)
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
    n, func = spec.num_partitions, spec.partition_func
    direct, h = _direct(func), hash
    buckets = _Buckets(spec)
    keys, values, ids = buckets.keys, buckets.values, buckets.ids
    c = 0
    for cid, key, value in records:
        b = (h(key) if direct and key is not None and not isinstance(key, tuple) else func(key)) % n
        keys[b].append(key)
        values[b].append(value)
        ids[b].append(cid)
        c += 1
        if c > buckets.batch:
            yield from buckets.blocks(())
            c = 0
    yield from buckets.blocks((), adapt=False)


def group_blocks(side: int, hi: int, records: Iterable[tuple[Any, list[Any], Any]], spec: ShuffleSpec,
                 ) -> Iterator[bytes]:
    """A group side's ``(key, values, their ids)`` records as PairwiseRDD's byte strings, as
    ``combine_blocks``; a batch counts values. The ids are a buffer per key: the values' uint32
    positions in map partition ``hi >> 32`` (``hi`` >= 0, in the batch's head), or their int64
    global ids (``hi`` -1, a task that spilled). A key with more values than a batch goes in a
    block of its own, its ids pickled from the buffer they are in (a hot key's millions)."""
    from pyspark.serializers import pack_long

    n, func = spec.num_partitions, spec.partition_func
    direct, h = _direct(func), hash
    buckets = _Buckets(spec, "I" if hi >= 0 else "q")
    keys, values, ids = buckets.keys, buckets.values, buckets.ids
    head = (side, hi)
    c = 0
    for key, vals, key_ids in records:
        b = (h(key) if direct and key is not None and not isinstance(key, tuple) else func(key)) % n
        if len(vals) > buckets.batch:
            yield pack_long(b)
            yield buckets.dumps((*head, [key], [vals], _buffer(key_ids, spec.zero_copy)))
            continue
        keys[b].append(key)
        values[b].append(vals)
        ids[b].frombytes(key_ids)
        c += len(vals)
        if c > buckets.batch:
            yield from buckets.blocks(head)
            c = 0
    yield from buckets.blocks(head, adapt=False)
