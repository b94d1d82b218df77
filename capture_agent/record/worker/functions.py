"""Small functions that capture and query code hand to Spark as task functions.

They live here, in the package shipped by value, so that executors never import the parts of the
agent that only the driver needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from capture_agent.record.storage.sources import text_unit


def identity_partition(iterator: Iterable[Any]) -> Iterable[Any]:
    return iterator


def pair_with_one(x: Any) -> tuple[Any, int]:
    return (x, 1)


def is_not_none(x: Any) -> bool:
    return x is not None


def is_comparable(x: Any) -> bool:
    """histogram's test of a value (PySpark's): neither None nor NaN."""
    return x is not None and not (type(x) is float and x != x)


def pair_of(x: Any) -> tuple[Any, Any]:
    return (x, x)


def min_max(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    return min(a[0], b[0]), max(a[1], b[1])


def unit_values(unit: tuple[Any, ...]) -> list[Any]:
    """The values of one ``text_unit`` (lines of a text split fetched by offset)."""
    return [value for _, value in text_unit(*unit)]


def identity(x: Any) -> Any:
    """The default key function of sortByKey and repartitionAndSortWithinPartitions (by name, so a
    replay from a run's folder imports it rather than loading the job's code)."""
    return x


def plus_zero(x: Any) -> Any:
    """The first aggregate of ``foldByKey(0, operator.add)`` and ``aggregateByKey(0, add, add)``
    (``0 + x``, as PySpark's ``add(deepcopy(0), x)``), by name: a what-if knows such a combine for
    a sum (``query.subtraction``)."""
    return 0 + x


def dropping(gone: dict[int, Any]) -> Callable[[int, Iterable[Any]], Iterator[Any]]:
    """A mapPartitionsWithIndex function leaving out the records at ``gone`` ({partition: the
    positions to leave out, a BitMap or set}): an input without some of its records."""

    def keep(split: int, iterator: Iterable[Any]) -> Iterator[Any]:
        positions = gone.get(split)
        if positions is None:
            yield from iterator
            return
        for i, value in enumerate(iterator):
            if i not in positions:
                yield value

    return keep


class Slices:
    """The partitions of ``sc.parallelize(data, num_slices)``, cut in a task as PySpark cuts them:
    a range by its arithmetic; anything else as a list sent in batches of ``batch`` records that
    the JVM splits evenly by batch (a parallelized input built again from a run's folder)."""

    def __init__(self, data: Any, num_slices: int, batch_size: int = 0) -> None:
        self.data = data if isinstance(data, range) else list(data)
        self.num_slices = num_slices
        self.batch = max(1, min(len(self.data) // max(num_slices, 1), batch_size or 1024))

    def bounds(self, split: int) -> tuple[int, int]:
        size, n = len(self.data), self.num_slices
        if isinstance(self.data, range):
            return int(split * size / n), int((split + 1) * size / n)
        batches = -(-size // self.batch)
        return min(split * batches // n * self.batch, size), min((split + 1) * batches // n * self.batch, size)

    def __call__(self, split: int, iterator: Iterable[Any]) -> Iterator[Any]:
        start, end = self.bounds(split)
        return iter(self.data[start:end])


class LocalCombine:
    """A combineByKey's map side on one partition: its (key, aggregate) pairs, as the captured job
    computed them (``create`` None: the value itself, as reduceByKey)."""

    def __init__(self, create: Callable[[Any], Any] | None, merge: Callable[[Any, Any], Any]) -> None:
        self.create = create
        self.merge = merge

    def __call__(self, iterator: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        combined: dict[Any, Any] = {}
        create, merge = self.create, self.merge
        for key, value in iterator:
            if key in combined:
                combined[key] = merge(combined[key], value)
            else:
                combined[key] = create(value) if create is not None else value
        return iter(combined.items())


def _kept_rows(fs: Any, path: str, keys: frozenset[Any] | None) -> Iterator[tuple[Any, Any]]:
    """(key, aggregate) rows of one kept aggregates file, those of ``keys`` only when given (the
    others' values are not unpickled)."""
    import pickle

    from capture_agent.record.storage.tables import read_rows

    table = read_rows(fs, path, ["key", "value"])
    for key_bytes, value in zip(table.column("key").to_pylist(), table.column("value").to_pylist(), strict=True):
        key = pickle.loads(key_bytes)
        if keys is None or key in keys:
            yield key, pickle.loads(value)


class KeptAggregates:
    """In a task: the (key, aggregate) pairs one combiner partition kept at capture
    (``tails.keep_aggregates``, a Parquet file of the store), unpickled there; those of ``keys``
    only when given."""

    def __init__(self, fs: Any, keys: frozenset[Any] | None = None) -> None:
        self.fs = fs
        self.keys = keys

    def __call__(self, path: str) -> Iterator[tuple[Any, Any]]:
        return _kept_rows(self.fs, path, self.keys)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # noqa: BLE001 - a value that cannot say: count it as changed
        return False


class ChangedAggregates:
    """In the task of a map-side partition holding deleted records: the partition combined again
    without them (``create``, ``merge``, as ``LocalCombine``) and compared with the aggregates it
    kept (``files``: {partition: path}); yields (partition, key, new aggregate, present) for each
    key whose aggregate changed (``present`` False: none of its records is left there)."""

    def __init__(self, create: Callable[[Any], Any] | None, merge: Callable[[Any, Any], Any], fs: Any,
                 files: dict[int, str]) -> None:
        self.combine = LocalCombine(create, merge)
        self.fs = fs
        self.files = files

    def __call__(self, split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any, Any, bool]]:
        fresh = dict(self.combine(iterator))
        missing = object()
        for key, kept in _kept_rows(self.fs, self.files[split], None):
            new = fresh.pop(key, missing)
            if new is missing:
                yield split, key, None, False
            elif not _same(kept, new):
                yield split, key, new, True
        for key, new in fresh.items():
            yield split, key, new, True


class TaggedAggregates:
    """In a task: the kept aggregates of ``keys`` in one (partition, path), tagged ``((0, key),
    aggregate)`` (the old output) and, unless the partition's aggregate of that key changed
    (``changed``: (partition, key) pairs), ``((1, key), aggregate)`` (the new one)."""

    def __init__(self, fs: Any, keys: frozenset[Any], changed: frozenset[tuple[int, Any]]) -> None:
        self.fs = fs
        self.keys = keys
        self.changed = changed

    def __call__(self, part_path: tuple[int, str]) -> Iterator[tuple[tuple[int, Any], Any]]:
        part, path = part_path
        for key, value in _kept_rows(self.fs, path, self.keys):
            yield (0, key), value
            if (part, key) not in self.changed:
                yield (1, key), value


class KeyIn:
    """A filter of a what-if's key-restricted replay: records whose key (``record[0]``, or the
    whole record when ``whole``) is one of ``keys`` (or is not, when ``negate``)."""

    def __init__(self, keys: frozenset[Any], whole: bool = False, negate: bool = False) -> None:
        self.keys = keys
        self.whole = whole
        self.negate = negate

    def __call__(self, record: Any) -> bool:
        try:
            found = (record if self.whole else record[0]) in self.keys
        except TypeError:  # an unhashable record is no key
            found = False
        return found is not self.negate


class Tagged:
    """``(tag, record)``: records of two RDDs told apart after one collect."""

    def __init__(self, tag: int) -> None:
        self.tag = tag

    def __call__(self, record: Any) -> tuple[int, Any]:
        return self.tag, record
