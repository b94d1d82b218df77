"""Spilling: a captured task keeps within ``spark.python.worker.memory``, as PySpark's own merger does.

The map-side combine and group (generated code, ``tails.py``) and the reduce sides of combine
and group (``boundary.py``) keep their keys in a dict and their lineage in flat arrays. Every
``CHECK_EVERY`` records they ask a ``MemoryBudget`` the question PySpark's ``ExternalMerger`` asks
(``pyspark.shuffle.get_used_memory``: the worker's resident memory, against the same limits:
0.9 of the setting on the map side, the setting on the reduce side). Past it, the task's state
(each key's value *and* the ids it came from) goes to local disk as one run, hash-partitioned into
``BUCKETS`` files as ``ExternalMerger`` does, and the task starts again with empty state.

At the end of a task that spilled, the runs are merged one bucket at a time (the rest stays on
disk): the keys of a bucket are merged with the operator's own merge function, their ids
concatenated in run order (so position lists stay sorted), and the bucket's records are yielded
and its rows appended to the partition's table (``storage.tables.TableStream``). Memory is then
bounded by one bucket, whatever the partition size.

Spill files live under ``SPARK_LOCAL_DIRS`` (``/tmp`` by default), like PySpark's, in the pickled,
compressed, auto-batched format of ``pyspark.shuffle``, and are deleted bucket by bucket as they
are merged (and all of them if the task fails).
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

BUCKETS = 59  # ExternalMerger's partitions
CHECK_EVERY = 1000  # records between two memory checks (ExternalMerger's first batch)
SPILL_BATCH = 1000  # items of one bucket written together
MAP_SIDE = 0.9  # the map side's share of spark.python.worker.memory (as in PySpark's combineByKey)


def used_memory_mb() -> int:
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


class Runs:
    """Runs of (key, state) on local disk, one file per run and bucket; merged bucket by bucket.

    The caller drops what it spilled, then calls ``budget.spilled()``."""

    def __init__(self, budget: MemoryBudget) -> None:
        self.budget = budget
        self.count = 0
        self.folder = ""

    def spill(self, items: Iterable[tuple[Any, Any]]) -> None:
        import pyspark.shuffle as shuffle

        if not self.folder:
            self.folder = _local_dir()
        path = os.path.join(self.folder, str(self.count))
        os.makedirs(path, exist_ok=True)
        serializer = _serializer()
        self.budget.before = used_memory_mb()
        files = [open(os.path.join(path, str(i)), "wb") for i in range(BUCKETS)]
        try:
            # each bucket's items go out in batches (not item by item, not all at once)
            batches: list[list[tuple[Any, Any]]] = [[] for _ in range(BUCKETS)]
            for item in items:
                i = hash(item[0]) % BUCKETS
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
        self.count += 1
        shuffle.DiskBytesSpilled += written

    def buckets(self, merge: Callable[[Any, Any], Any]) -> Iterator[dict[Any, Any]]:
        """Each bucket's states merged by key (``merge(a, b)`` returns the merged state), in turn."""
        serializer = _serializer()
        try:
            for i in range(BUCKETS):
                merged: dict[Any, Any] = {}
                for run in range(self.count):
                    path = os.path.join(self.folder, str(run), str(i))
                    with open(path, "rb") as f:
                        for key, state in serializer.load_stream(f):
                            old = merged.get(key)
                            merged[key] = state if old is None else merge(old, state)
                    os.unlink(path)
                yield merged
        finally:
            self.remove()

    def remove(self) -> None:
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
