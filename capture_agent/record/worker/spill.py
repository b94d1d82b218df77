"""Spilling: a captured task keeps within ``spark.python.worker.memory`` (times a lineage
allowance), as PySpark's own merger does.

The map-side combine and group (generated code, ``tails.py``) and the reduce sides of combine
and group (``boundary.py``) keep their keys in a dict and their lineage in flat arrays:
``key -> slot``, a list of values by slot and a slot per record; the map-side combine, once its
keys are many, ``key -> value`` as PySpark does and a key tag per record (``worker.combine``). Every
``CHECK_EVERY`` records they ask a ``MemoryBudget`` the question PySpark's ``ExternalMerger`` asks
(the worker's resident memory, against the same limits: 0.9 of the setting on the map side, the
setting on the reduce side), each limit times ``MEMORY_FACTOR`` (the Spark conf
``spark.lineage.worker.memoryFactor``, 1.5 by default; 1.0 holds a captured task to plain's
budget). Past it, the task's state (each key's value *and* the ids it came from) goes to local
disk as one run, hash-partitioned into ``BUCKETS`` buckets as ``ExternalMerger`` does, and the
task starts again with empty state.

A run is a folder ``<run>/`` of
- ``0`` .. ``58``: each bucket's (key, value) pairs, pickled, compressed and auto-batched as
  ``pyspark.shuffle`` writes them, keys in the order the task first saw them;
- ``ids.arrow``: an Arrow IPC file of one record batch per bucket, whose list columns (one, or one
  per side of a cogroup) hold the ids of each of that bucket's keys, in the order of the bucket's
  pairs. The lists are grouped by key (from slots, or from the combine's tags by
  ``combine.slots_of_tags``) and bucketed in C++ (a stable sort by bucket and a take), never one
  Python object per key.

At the end of a task that spilled, ``Runs.merged`` merges the runs one bucket at a time (the rest
stays on disk): a bucket's keys are merged with the operator's merge function (``merge_by_key``),
each key getting a slot in first-seen order, and the ids of every run's lists are grouped by slot
with one sort and take (``group_by_slot``), concatenated in run order (so position lists stay
sorted). The caller yields the bucket's records and appends its rows to the partition's table
(``storage.tables.TableStream``). Memory is then bounded by one bucket, whatever the partition size.

Spill files live under ``SPARK_LOCAL_DIRS`` (``/tmp`` by default), like PySpark's. The pickles are
deleted bucket by bucket as they are merged, each ``ids.arrow`` (memory-mapped, one bucket's batch
at a time) once the merge is done, and all of them if the task fails.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import uuid
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from capture_agent.record.storage.layouts.base import u32_column

BUCKETS = 59  # ExternalMerger's partitions
CHECK_EVERY = 1000  # records between two memory checks (ExternalMerger's first batch)
SPILL_BATCH = 1000  # items of one bucket written together
MAP_SIDE = 0.9  # the map side's share of spark.python.worker.memory (as in PySpark's combineByKey)
# A captured task's budget is spark.python.worker.memory times this factor (a Spark conf): its state
# holds each record's position and key slot or tag beside the job's keys and values, and the group and
# reduce sides a slot int and a list entry per key too (on partitions of millions of nearly unique
# keys, 30-60% more than PySpark's dict), and pyarrow is loaded. Held to plain PySpark's budget, a
# captured word count spilled 1.3 GB where plain spilled nothing.
MEMORY_FACTOR_CONF = "spark.lineage.worker.memoryFactor"
MEMORY_FACTOR = 1.5
IDS_FILE = "ids.arrow"


_PAGE_MB = os.sysconf("SC_PAGE_SIZE") / (1 << 20) if hasattr(os, "sysconf") else 0.0


def used_memory_mb() -> int:
    """The worker's resident memory in MiB, as ``pyspark.shuffle.get_used_memory`` measures it.
    On Linux, read from ``/proc/self/statm`` directly: without psutil, PySpark's function first
    tries ``import psutil`` on every call, a failed search of the whole path (about 0.3 ms, a
    tenth of a captured reducer's time at a check every 1,000 records)."""
    if _PAGE_MB:
        try:
            with open("/proc/self/statm", "rb") as f:
                return int(int(f.read().split()[1]) * _PAGE_MB)
        except OSError:
            pass
    from pyspark.shuffle import get_used_memory

    return int(get_used_memory())


class MemoryBudget:
    """The worker memory a task may use (MiB), and whether it is over it now."""

    def __init__(self, limit_mb: float) -> None:
        self.limit = limit_mb
        self.before = 0  # the memory in use when the last spill began

    def over(self) -> bool:
        return used_memory_mb() >= self.limit

    def spilled(self) -> None:
        """Called once the spilled state is dropped: as ExternalMerger's ``_next_limit``, memory
        not given back raises the bar, so the task spills again only when it grows past it."""
        import pyarrow as pa
        import pyspark.shuffle as shuffle

        gc.collect()
        pa.default_memory_pool().release_unused()  # Arrow's allocator keeps freed pages otherwise
        used = used_memory_mb()
        self.limit = max(self.limit, used * 1.05)
        # the spill counters PySpark's worker reports as the task's metrics (the Spark UI's Spill columns)
        shuffle.MemoryBytesSpilled += max(self.before - used, 0) << 20


def _serializer() -> Any:
    from pyspark.serializers import AutoBatchedSerializer, CompressedSerializer, CPickleSerializer

    return AutoBatchedSerializer(CompressedSerializer(CPickleSerializer()))


def _local_dir() -> str:
    dirs = os.environ.get("SPARK_LOCAL_DIRS", tempfile.gettempdir()).split(",")
    return os.path.join(dirs[uuid.uuid4().int % len(dirs)], "python", str(os.getpid()), "lineage-" + uuid.uuid4().hex)


def merge_by_key(pairs: Iterable[tuple[Any, Any]], merge: Callable[[Any, Any], Any], index: dict[Any, int],
                 values: list[Any], slots: array) -> None:
    """Adds (key, value) pairs to a keyed state: a new key gets the next slot (``index``) and its
    value a place in ``values``, a known key's value is merged (``merge(old, new)``); each pair's
    slot is appended to ``slots``."""
    get = index.get
    keep_slot = slots.append
    for key, value in pairs:
        j = get(key)
        if j is None:
            j = index[key] = len(values)
            values.append(value)
        else:
            values[j] = merge(values[j], value)
        keep_slot(j)


def by_slot(slot_of_value: Any, values: Any, nslots: int = -1) -> Any:
    """``values`` (a pyarrow array; None: their indices, as uint32) grouped by their slots
    (``slot_of_value``, uint32) into one list per slot, as a ListArray, with one stable sort
    (each list keeps the values' order).

    The lists' offsets are the run ends of the sorted slots (run-end encoding: linear, where
    Arrow's value_counts hashes, ten times slower on a million keys). Without ``nslots`` every
    slot 0, 1, ... holds a value. Given ``nslots``, slots may be empty (a key with no record on
    one side of a cogroup): sorting ``0 .. nslots-1`` in with the slots gives every slot a run,
    one too long, and run k ends k + 1 past the offset where slot k + 1 starts.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    zero = pa.array([0], pa.int32())
    if nslots < 0:
        order = pc.sort_indices(slot_of_value)
        ends = pc.run_end_encode(pc.take(slot_of_value, order), run_end_type=pa.int32()).run_ends
    else:
        every = pc.subtract(pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.uint32()), nslots)),
                            pa.scalar(1, pa.uint32()))  # 0 .. nslots-1, in C
        both = pa.concat_arrays([every, slot_of_value])
        both_order = pc.sort_indices(both)  # stable: the values' own order is kept within a slot
        padded = pc.run_end_encode(pc.take(both, both_order), run_end_type=pa.int32())
        ends = pc.subtract(padded.run_ends, pc.add(pc.cast(every, pa.int32()), pa.scalar(1, pa.int32())))
        nth = pa.scalar(nslots, pa.uint64())
        order = pc.subtract(pc.filter(both_order, pc.greater_equal(both_order, nth)), nth)
    grouped = pc.cast(order, pa.uint32()) if values is None else pc.take(values, order)
    return pa.ListArray.from_arrays(pa.concat_arrays([zero, ends]), grouped)


def group_by_slot(slots: array, lists: list[Any], nslots: int) -> Any:
    """The lists (pyarrow ListArrays, in run order) concatenated per slot: ``slots[k]`` is the
    slot (of ``nslots``) of the k-th list over all of them. Each slot's ids stay in run order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    merged = pa.concat_arrays(lists)
    return by_slot(pc.take(u32_column(slots), pc.list_parent_indices(merged)), merged.flatten(), nslots)


class Runs:
    """Runs of (key, value) and their ids on local disk (see the module docstring); merged bucket
    by bucket.

    The caller drops what it spilled, then calls ``budget.spilled()``."""

    def __init__(self, budget: MemoryBudget) -> None:
        self.budget = budget
        self.count = 0
        self.folder = ""

    def spill(self, items: Iterable[tuple[Any, Any]], ids: list[Any] | None = None) -> None:
        """One run: the (key, value) ``items`` and, given ``ids`` (id columns, e.g. one per side of
        a cogroup: pyarrow ListArrays of one list per item, in the same order), their ids."""
        import pyspark.shuffle as shuffle

        if not self.folder:
            self.folder = _local_dir()
        path = os.path.join(self.folder, str(self.count))
        os.makedirs(path, exist_ok=True)
        serializer = _serializer()
        self.budget.before = used_memory_mb()
        buckets = array("B")
        bucket_of = buckets.append
        files = [open(os.path.join(path, str(i)), "wb") for i in range(BUCKETS)]
        try:
            # each bucket's items go out in batches (not item by item, not all at once)
            batches: list[list[tuple[Any, Any]]] = [[] for _ in range(BUCKETS)]
            for item in items:
                i = hash(item[0]) % BUCKETS
                bucket_of(i)
                batch = batches[i]
                batch.append(item)
                if len(batch) == SPILL_BATCH:
                    serializer.dump_stream(iter(batch), files[i])
                    batch.clear()
            for i, batch in enumerate(batches):
                serializer.dump_stream(iter(batch), files[i])
            written = sum(f.tell() for f in files)
        finally:
            for f in files:
                f.close()
        if ids is not None:
            written += _write_ids(os.path.join(path, IDS_FILE), buckets, ids)
        self.count += 1
        shuffle.DiskBytesSpilled += written

    def merged(self, merge: Callable[[Any, Any], Any]) -> Iterator[tuple[list[Any], list[Any], list[Any] | None]]:
        """Each bucket in turn, its runs merged: its keys (first-seen order), their values
        (``merge(a, b)`` returns two values of a key merged) and, for runs spilled with ids, per
        id column each key's ids over the runs in run order, as pyarrow ListArrays (else None)."""
        serializer = _serializer()
        id_files = [os.path.join(self.folder, str(run), IDS_FILE) for run in range(self.count)]
        with_ids = bool(id_files) and os.path.exists(id_files[0])
        try:
            for i in range(BUCKETS):
                index: dict[Any, int] = {}
                values: list[Any] = []
                slots = array("I")
                for run in range(self.count):
                    path = os.path.join(self.folder, str(run), str(i))
                    with open(path, "rb") as f:
                        merge_by_key(serializer.load_stream(f), merge, index, values, slots)
                    os.unlink(path)
                ids = _merged_ids(id_files, i, slots, len(values)) if with_ids else None
                yield list(index), values, ids
        finally:
            self.remove()

    def remove(self) -> None:
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def _write_ids(path: str, buckets: array, ids: list[Any]) -> int:
    """Writes the id columns (one list per item) as one record batch per bucket (``buckets[k]``:
    item k's bucket), items in their order within a bucket; returns the file's size."""
    import pyarrow as pa
    import pyarrow.compute as pc

    bucket_array = pa.Array.from_buffers(pa.uint8(), len(buckets), [None, pa.py_buffer(buckets)])
    order = pc.sort_indices(bucket_array)  # stable: each bucket keeps the items' order
    by_bucket = [column.take(order) for column in ids]
    counts = array("q", bytes(8 * BUCKETS))
    for bucket, count in zip(*pc.value_counts(bucket_array).flatten(), strict=True):
        counts[bucket.as_py()] = count.as_py()
    schema = pa.schema([(f"ids{i}", column.type) for i, column in enumerate(ids)])
    start = 0
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
        for count in counts:
            writer.write_batch(pa.record_batch([column.slice(start, count) for column in by_bucket], schema=schema))
            start += count
    return os.path.getsize(path)


def _merged_ids(id_files: list[str], bucket: int, slots: array, nslots: int) -> list[Any]:
    """Bucket ``bucket``'s id columns of every run, grouped by key slot (``group_by_slot``). Each
    file is mapped only while its batch is read, so the bucket's pages are unmapped once grouped."""
    import pyarrow as pa

    sources = [pa.memory_map(path) for path in id_files]
    try:
        batches = [pa.ipc.open_file(source).get_batch(bucket) for source in sources]
        return [group_by_slot(slots, [batch.column(i) for batch in batches], nslots)
                for i in range(batches[0].num_columns)]
    finally:
        for source in sources:
            source.close()
