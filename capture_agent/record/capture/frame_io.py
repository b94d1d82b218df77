"""Where captured DataFrames end: their actions' output points.

An action's output is an ``output`` point of the ``sets`` layout: row i <- one id set per source
(the hidden columns of the row). A result brought to the driver (collect, take, count,
toPandas...) is one table written by the driver, its values kept beside it; a write keeps the
frame in memory and disk for the time of the write, and each of its partitions writes its own
table (record (partition, i) is row i of that partition's part files) in a ``frame_write``
point that lists the Parquet part files the write made, so a captured read of them, in this run
or another, chains into this job (``layouts.inputs.FileRows``). When the part files' row counts
do not match the partitions' (a format or writer that does not write one partition per part
file), no files are listed and reads of them start a new trace there: never a wrong link.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from capture_agent.record.capture.frame_columns import output_column_lineage
from capture_agent.record.capture.frame_jvm import saved_plan
from capture_agent.record.capture.outputs import OutputRun, store_values
from capture_agent.record.errors import UnsupportedOperation
from capture_agent.record.query.call_site import CallSite, user_call_site
from capture_agent.record.query.frame_replay import replay_rows
from capture_agent.record.storage.layouts import FrameWrite
from capture_agent.record.storage.layouts.shuffled import write_sets_per_parent
from capture_agent.record.storage.manifest import CapturePoint
from capture_agent.record.worker.frames import id_sets, lineage_writer

# ``frame``: a ``frames.LineageFrame`` (its rewritten frame ``_df``, its ``_slots`` of hidden
# columns, its ``_layout()``); typed Any so that this module does not import that one.


def _new_output(lc: Any, frame: Any, op: str, partitions: int, layout: Any = None) -> CapturePoint:
    parents = [lc.store.point(slot.source) for slot in frame._slots]
    point = lc.store.new_point("output", op, layout or frame._layout(), parents, partitions)
    plan = frame._columns_plan or frame._df._jdf.queryExecution().analyzed()
    point.column_lineage = output_column_lineage(lc, plan, frame.columns)
    return point


def collected(frame: Any, op: str) -> list[Any]:
    """The frame's rows brought to the driver (Rows of its visible columns), its lineage
    written as an output point."""
    with CallSite(frame._lc.sc, user_call_site(op)):  # Spark's jobs and stages named by the user's line
        visible, hidden = frame._positions()
        plan = plan_ahead(frame)
        values, ids = split_collect(frame._df, visible, hidden)
        record(frame, op, values, id_sets(ids, [s.is_set for s in frame._slots]), plan)
    return values


def split_collect(df: Any, visible: list[int], hidden: list[int]) -> tuple[list[Any], list[tuple[Any, ...]]]:
    """``df.collect()`` split as it arrives: the Rows of the ``visible`` columns (what PySpark's
    collect of them gives) and the tuples of the ``hidden`` ones, each row made once. PySpark's
    rows come pickled as calls of ``_create_row_inbound_converter(schema)(values...)``: that name
    is read here as a converter that makes the visible Row and keeps the hidden values aside (a
    second Row per row, made from PySpark's, cost a quarter of a 200,000-row collect)."""
    import pickle

    from pyspark.serializers import BatchedSerializer, CPickleSerializer
    from pyspark.sql.types import StructType
    from pyspark.traceback_utils import SCCallSiteSync
    from pyspark.util import _load_from_socket

    aside: list[tuple[Any, ...]] = []
    keep = aside.append
    names = df.columns

    pick_visible, pick_hidden = _picker(visible), _picker(hidden)
    made: dict[int, Any] = {}  # a batch's rows share one unpickled schema: its converter, made once

    def converter(schema: Any) -> Any:
        known = made.get(id(schema))
        if known is not None and known[0] is schema:
            return known[1]
        if not isinstance(schema, StructType) or schema.names != names:
            return lambda *a: schema.fromInternal(a)  # a struct value inside a row: as PySpark
        shown = StructType([schema.fields[i] for i in visible])

        def row(*a: Any) -> Any:
            keep(pick_hidden(a))
            return shown.fromInternal(pick_visible(a))

        made[id(schema)] = (schema, row)
        return row

    class Unpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            if module == "pyspark.sql.types" and name == "_create_row_inbound_converter":
                return converter
            return super().find_class(module, name)

    class Serializer(CPickleSerializer):
        def loads(self, obj: bytes, encoding: str = "bytes") -> Any:
            import io

            return Unpickler(io.BytesIO(obj), encoding=encoding).load()

    with SCCallSiteSync(df._sc):
        sock_info = df._jdf.collectToPython()
    with _load_from_socket(sock_info, BatchedSerializer(Serializer())) as stream:
        values = list(stream)
    if len(aside) != len(values):
        raise RuntimeError(f"collect: {len(values)} rows but {len(aside)} id tuples (PySpark's row pickling changed?)")
    return values, aside


def _picker(indexes: list[int]) -> Any:
    """A function giving a tuple's items at ``indexes`` as a tuple (of one item too)."""
    from operator import itemgetter

    if len(indexes) == 1:
        index = indexes[0]
        return lambda t: (t[index],)
    return itemgetter(*indexes) if indexes else (lambda t: ())


def record(frame: Any, op: str, values: list[Any], sets: list[list[bytes]], plan: Callable[[], bytes]) -> CapturePoint:
    """Writes an output point of one table (values kept) and finishes the action (``plan``:
    ``plan_ahead``'s)."""
    lc = frame._lc
    point = _new_output(lc, frame, op, 1)
    target = lc._target(point)
    write_sets_per_parent(target, 0, sets)
    ids = list(range(len(values)))  # partition 0: ids are positions
    store_values(lc.store.fs, point, ids, values)
    finished(frame, OutputRun(point, values, ids), plan)
    return point


def written(frame: Any, write: Any, destination: Any) -> Any:
    """Runs ``write`` (a callable given the plain frame of the visible columns) with the frame
    persisted, then writes one lineage table per partition from the same persisted rows.
    ``destination()`` gives (folder written or None, its format) once the write is done."""
    from pyspark import StorageLevel

    lc = frame._lc
    names = frame.columns
    full = frame._df
    was_cached = full.is_cached
    plan = plan_ahead(frame)
    full = full.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        folder, fmt = destination()
        before = set(_part_files(lc, folder)) if folder else set()
        result = write(full.select(*names))
        folder, fmt = destination()
        layout = FrameWrite(mode=frame._layout().mode, path=folder or "", format=fmt)
        point = _new_output(lc, frame, "write", full.rdd.getNumPartitions(), layout)
        lineage = full.select(*[s.column for s in frame._slots]).rdd
        counts = dict(lineage.mapPartitionsWithIndex(
            lineage_writer(lc._target(point), [s.is_set for s in frame._slots])).collect())
        if folder and fmt == "parquet":
            made = {uri: about for uri, about in _part_files(lc, folder).items() if uri not in before}
            layout.files = _written_parts(made, counts)
    finally:
        if not was_cached:
            full.unpersist()
    finished(frame, OutputRun(point, None, []), plan)
    return result


def finished(frame: Any, output: OutputRun, plan: Callable[[], bytes]) -> None:
    """Finishes the frame's action, whose output is ``output`` (``plan``: ``plan_ahead``'s): the
    output replayable in the job's process (``replayed``) and from the run's folder (``kept``)."""
    lc, point = frame._lc, output.point
    sources = source_columns(lc, frame)
    output.frame_redo = replayed(frame, sources)
    lc.outputs[point.capture_id] = output
    lc.kept.keep_frame(point.capture_id, plan, sources, frame.columns)
    frame._point = point.capture_id
    lc.after_action(point)


def replayed(frame: Any, sources: dict[str, str]) -> Callable[[dict[str, Any]], list[Any]]:
    """What gives the frame's rows computed again without ``deleted`` ({source capture id: ids}):
    the frame's own analyzed plan, with ``WHERE lineage_keep('<deleted ids>', id)`` put right
    above each source where its ids are made (``sources``: ``source_columns``; ``query.frame_replay``),
    run again. Captured queries pay nothing for this; a cache the frame reads is not used where the
    plan changed. It holds the analyzed plan, not the frame: the frame's executed plan holds what
    its action built (each broadcast table's hashed relation, a page of up to 64 MB however small
    the table), which an application's later queries need the memory of.

    The function raises ReplayNotPossible: a deleted record is not one of a source the frame reads
    (Parquet, ORC, text, CSV, JSON Lines, createDataFrame of local data): RDD records reach a frame
    through the RDD engine.
    """
    lc, plan, columns = frame._lc, frame._df._jdf.queryExecution().analyzed(), frame.columns
    return lambda deleted: replay_rows(lc.spark, plan, sources, columns, deleted)


def source_columns(lc: Any, frame: Any) -> dict[str, str]:
    """The hidden column where each file source (or createDataFrame) the frame reads made its ids
    (the sources' own frames' slots, through the aggregates' points between)."""
    from capture_agent.record.storage.layouts import FileLines, FileRows

    read = set().union(*[lc.store.ancestors(slot.source) for slot in frame._slots])
    return {s.source: s.column for s in lc.frames.source_slots
            if s.source in read and isinstance(lc.store.point(s.source).layout, (FileRows, FileLines))}


def plan_ahead(frame: Any) -> Callable[[], bytes]:
    """The frame's analyzed plan as ``KeptPlan``'s bytes, saved from now on while the action runs
    (``KeptJob.ahead``): a callable waiting for them."""
    lc = frame._lc
    return lc.kept.ahead(lambda: saved_plan(lc, frame._df._jdf.queryExecution().analyzed()))


def _qualified(lc: Any, path: Any) -> str | None:
    """A folder as Hadoop qualifies it (``/x`` -> ``file:/x``); None for none."""
    if not path or not isinstance(path, str):
        return None
    jvm = lc.sc._jvm
    hadoop = jvm.org.apache.hadoop.fs.Path(path)
    return str(hadoop.getFileSystem(lc.sc._jsc.hadoopConfiguration()).makeQualified(hadoop).toString())


def _part_files(lc: Any, folder: str) -> dict[str, tuple[str, int, int]]:
    """The part files of a written folder: qualified path -> (file name, size, modification time
    in ms), through Hadoop's FileSystem."""
    jvm = lc.sc._jvm
    path = jvm.org.apache.hadoop.fs.Path(folder)
    fs = path.getFileSystem(lc.sc._jsc.hadoopConfiguration())
    if not fs.exists(path):
        return {}
    out = {}
    for status in fs.listStatus(path):
        name = str(status.getPath().getName())
        if status.isFile() and name.startswith("part-"):
            out[str(status.getPath().toString())] = (name, int(status.getLen()), int(status.getModificationTime()))
    return out


def _written_parts(made: dict[str, tuple[str, int, int]], counts: dict[int, int]) -> list[dict[str, Any]]:
    """{path, size, mtime, part, row_start, rows} of each Parquet part file a write made, a
    partition's files in Spark's order (c000, c001...); none when their rows do not add up to the
    partitions'."""
    from capture_agent.record.storage.sources import parquet_rows

    files: list[dict[str, Any]] = []
    for uri, (name, size, mtime) in sorted(made.items(), key=lambda kv: kv[1][0]):
        digits = name[len("part-"):].split("-", 1)[0]
        if not digits.isdigit():
            return []
        files.append({"path": uri, "size": size, "mtime": mtime, "part": int(digits), "rows": parquet_rows(uri)})
    next_row: dict[int, int] = {}
    for f in sorted(files, key=lambda f: (f["part"], _counter(f["path"]))):
        f["row_start"] = next_row.get(f["part"], 0)
        next_row[f["part"]] = f["row_start"] + f["rows"]
    if {p: n for p, n in next_row.items() if n} != {p: n for p, n in counts.items() if n}:
        return []
    return files


def _counter(uri: str) -> int:
    """A part file's counter within its partition (``-c001`` -> 1; Spark splits a partition's rows
    over files past ``maxRecordsPerFile``, c000 first)."""
    name = uri.rsplit("/", 1)[-1]
    tail = name.split("-c", 1)[-1] if "-c" in name else ""
    digits = tail.split(".", 1)[0]
    return int(digits) if digits.isdigit() else 0


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

        with CallSite(self._frame._lc.sc, user_call_site(method)):
            return written(self._frame, write, lambda: self._destination(method, args, kwargs))

    def _destination(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str | None, str]:
        """(qualified folder or None when unknown yet, format) a save writes to."""
        spark = self._frame._lc.spark
        options: dict[str, Any] = {}
        fmt = kwargs.get("format")
        for name, a, kw in self._calls:
            if name == "format":
                fmt = fmt or a[0]
            elif name == "option":
                options[str(a[0]).lower()] = a[1]
            elif name == "options":
                options.update({k.lower(): v for k, v in kw.items()})
        if method == "saveAsTable":
            table = args[0] if args else kwargs["name"]
            if not spark.catalog.tableExists(table):
                return None, str(fmt or "")
            about = {r["col_name"]: r["data_type"] for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()}
            return _qualified(self._frame._lc, about.get("Location")), str(about.get("Provider", fmt or "")).lower()
        if method != "save":
            fmt = method
        path = args[0] if args else kwargs.get("path", options.get("path"))
        default = spark.conf.get("spark.sql.sources.default", "parquet")
        return _qualified(self._frame._lc, path), str(fmt or default).lower()

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
