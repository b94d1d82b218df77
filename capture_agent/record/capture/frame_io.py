"""Where captured DataFrames end: their actions' output points.

An action's output is an ``output`` point of the ``sets`` layout: row i <- one id set per source
(the hidden columns of the row). A result brought to the driver (collect, take, count,
toPandas...) is one table written by the driver, its values kept beside it; a write keeps the
frame in memory and disk for the time of the write, and each of its partitions writes its own
table (record (partition, i) is row i of that partition's part file).
"""

from __future__ import annotations

from typing import Any

from capture_agent.record.capture.outputs import OutputRun, store_values
from capture_agent.record.errors import UnsupportedOperation
from capture_agent.record.storage.layouts.shuffled import write_sets_per_parent
from capture_agent.record.storage.manifest import CapturePoint
from capture_agent.record.worker.frames import id_sets, lineage_writer

# ``frame``: a ``frames.CapturedDataFrame`` (its plain frame ``_df``, its ``_slots`` of hidden
# columns, its ``_layout()``); typed Any so that this module does not import that one.


def _new_output(lc: Any, frame: Any, op: str, partitions: int) -> CapturePoint:
    parents = [lc.store.point(slot.source) for slot in frame._slots]
    return lc.store.new_point("output", op, frame._layout(), parents, partitions)


def collected(frame: Any, op: str) -> list[Any]:
    """The frame's rows brought to the driver (Rows of its visible columns), its lineage
    written as an output point."""
    from pyspark.sql.types import _create_row

    names = frame.columns
    visible, hidden = frame._positions()
    rows = frame._df.collect()
    values = [_create_row(names, [row[i] for i in visible]) for row in rows]
    record(frame, op, values, id_sets([[row[i] for i in hidden] for row in rows], [s.is_set for s in frame._slots]))
    return values


def record(frame: Any, op: str, values: list[Any], sets: list[list[bytes]]) -> CapturePoint:
    """Writes an output point of one table (values kept) and finishes the action."""
    lc = frame._lc
    point = _new_output(lc, frame, op, 1)
    target = lc._target(point)
    write_sets_per_parent(target, 0, sets)
    ids = list(range(len(values)))  # partition 0: ids are positions
    store_values(lc.store.fs, point, ids, values)
    lc.outputs[point.capture_id] = OutputRun(point, values, ids)
    frame._point = point.capture_id
    lc.after_action(point)
    return point


def written(frame: Any, write: Any) -> Any:
    """Runs ``write`` (a callable given the plain frame of the visible columns) with the frame
    persisted, then writes one lineage table per partition from the same persisted rows."""
    from pyspark import StorageLevel

    lc = frame._lc
    names = frame.columns
    full = frame._df
    was_cached = full.is_cached
    full = full.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        result = write(full.select(*names))
        point = _new_output(lc, frame, "write", full.rdd.getNumPartitions())
        lineage = full.select(*[s.column for s in frame._slots]).rdd
        lineage.mapPartitionsWithIndex(lineage_writer(lc._target(point), [s.is_set for s in frame._slots])).count()
    finally:
        if not was_cached:
            full.unpersist()
    frame._point = point.capture_id
    lc.after_action(point)
    return result


class CapturedWriter:
    """``frame.write``: DataFrameWriter's settings recorded, applied to the visible columns when
    a save runs (partitionBy and bucketBy are refused: a row's part file would not be its
    partition's)."""

    def __init__(self, frame: Any) -> None:
        self._frame = frame
        self._calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def _setting(self, name: str, *args: Any, **kwargs: Any) -> CapturedWriter:
        self._calls.append((name, args, kwargs))
        return self

    def mode(self, saveMode: str | None) -> CapturedWriter:
        return self._setting("mode", saveMode)

    def format(self, source: str) -> CapturedWriter:
        return self._setting("format", source)

    def option(self, key: str, value: Any) -> CapturedWriter:
        return self._setting("option", key, value)

    def options(self, **options: Any) -> CapturedWriter:
        return self._setting("options", **options)

    def partitionBy(self, *cols: Any) -> CapturedWriter:
        raise UnsupportedOperation("DataFrameWriter.partitionBy", "write without partitionBy to keep lineage")

    def bucketBy(self, *args: Any, **kwargs: Any) -> CapturedWriter:
        raise UnsupportedOperation("DataFrameWriter.bucketBy")

    def _save(self, method: str, *args: Any, **kwargs: Any) -> Any:
        def write(df: Any) -> Any:
            writer = df.write
            for name, a, kw in self._calls:
                writer = getattr(writer, name)(*a, **kw)
            return getattr(writer, method)(*args, **kwargs)

        return written(self._frame, write)

    def save(self, *args: Any, **kwargs: Any) -> Any:
        return self._save("save", *args, **kwargs)

    def parquet(self, *args: Any, **kwargs: Any) -> Any:
        return self._save("parquet", *args, **kwargs)

    def csv(self, *args: Any, **kwargs: Any) -> Any:
        return self._save("csv", *args, **kwargs)

    def json(self, *args: Any, **kwargs: Any) -> Any:
        return self._save("json", *args, **kwargs)

    def orc(self, *args: Any, **kwargs: Any) -> Any:
        return self._save("orc", *args, **kwargs)

    def text(self, *args: Any, **kwargs: Any) -> Any:
        return self._save("text", *args, **kwargs)

    def saveAsTable(self, *args: Any, **kwargs: Any) -> Any:
        return self._save("saveAsTable", *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise UnsupportedOperation(f"DataFrameWriter.{name}")
