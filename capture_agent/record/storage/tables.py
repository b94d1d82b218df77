"""Association tables: one Parquet file per capture point and partition, written once by its task.

``<location>/part-NNNNN.parquet`` holds the rows of partition NNNNN. Integer columns are
delta-encoded; columns of serialized Roaring bitmaps are left uncompressed (they are compact
already) and live in small row groups, so a trace of one record reads one small row group. Rows
holding lists of ids start a new row group every ``ROW_GROUP_IDS`` ids or so (``group_bounds``):
a word count's first keys hold most of a partition's ids, and reading one row decodes its group.

A task that cannot write its table does not fail the job: the failure is added to the run's
failure accumulator (a Spark accumulator the driver reads after each action), so the run's
manifest and the server learn at once which tables are missing and why.

Each table written in a Spark task carries that task's stage id in its schema metadata
(``lineage.stage_id``): the driver reads it back (``rows_and_stage``) so the server can place the
capture point in the stage that ran it.

Task-safe: imports only the standard library, pyarrow, ``storage.fs`` (and PySpark's TaskContext).
"""

from __future__ import annotations

import bisect
import dataclasses
import os
import sys
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from capture_agent.record.storage.fs import StoreFS, file_exists, replace_file

ROW_GROUP = 16384
ROW_GROUP_SETS = 1024  # rows holding id sets: a trace of one record reads one small row group
ROW_GROUP_HEADS = 4096  # rows of a first id and the rest (``layouts.heads``): a few bits a row
ROW_GROUP_IDS = 65536  # ids in the lists of one row group, about (a row holding more is a group alone)
_INT_ENCODING = "DELTA_BINARY_PACKED"


def table_name(part: int) -> str:
    return f"part-{part:05d}.parquet"


def partial_name(part: int) -> str:
    """A prefix of a partition's input table, written when take() stopped reading early."""
    return f"partial-{part:05d}.parquet"


def aggregates_name(part: int) -> str:
    """A combiner partition's map-side aggregates (key and value pickled), kept for what-ifs."""
    return f"aggregates-{part:05d}.parquet"


def part_of(name: str) -> int | None:
    """The partition of a table file name, or None for other files."""
    if name.startswith("part-") and name.endswith(".parquet"):
        return int(name[5:10])
    return None


class TableSink(Protocol):
    """Where a layout's writer puts a partition's rows: a ``TableTarget`` or a ``TableStream``."""

    def write(self, part: int, columns: dict[str, Any]) -> bool: ...


class FailureList:
    """AccumulatorParam of the run's table-write failures: (capture id, partition, reason) tuples."""

    def zero(self, value: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
        return []

    def addInPlace(self, a: list[tuple[str, int, str]], b: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
        a.extend(b)
        return a


@dataclass(frozen=True)
class TableTarget:
    """Where the tasks of one capture point write their tables, and report failures to.

    Deliberately small (a pyarrow file system and plain fields): it travels, class included, with
    every task that writes a table.
    """

    filesystem: Any = dataclasses.field(compare=False)  # pyarrow.fs.FileSystem, or its pickle until first used (``fs``)
    local: bool
    location: str
    capture_id: str
    failures: Any = None  # the run's pyspark Accumulator of FailureList, or None outside Spark
    keep_aggregates: int = 0  # a combiner's tasks keep their map-side aggregates up to this many keys

    @property
    def fs(self) -> Any:
        """The pyarrow file system. A task unpickles it (importing pyarrow, some 40 MB of a
        worker's memory) when it first writes, once the job's own state is let go, not when
        the task starts."""
        if isinstance(self.filesystem, bytes):
            import pickle

            object.__setattr__(self, "filesystem", pickle.loads(self.filesystem))
        return self.filesystem

    def __getstate__(self) -> dict[str, Any]:
        import pickle

        state = dict(self.__dict__)
        if not isinstance(self.filesystem, bytes):
            state["filesystem"] = pickle.dumps(self.filesystem)
        return state

    @classmethod
    def of(cls, store: StoreFS, location: str, capture_id: str, failures: Any = None) -> TableTarget:
        return cls(store.fs, store.is_local, location, capture_id, failures)

    def path(self, part: int) -> str:
        return f"{self.location}/{table_name(part)}"

    def partial_path(self, part: int) -> str:
        return f"{self.location}/{partial_name(part)}"

    def aggregates_path(self, part: int) -> str:
        return f"{self.location}/{aggregates_name(part)}"

    def report(self, part: int, error: BaseException) -> None:
        reason = f"{type(error).__name__}: {error}"[:1000]
        print(f"lineage: cannot write {self.path(part)}: {reason}", file=sys.stderr)
        if self.failures is not None:
            self.failures.add([(self.capture_id, part, reason)])

    def write(self, part: int, columns: dict[str, Any]) -> bool:
        """Writes one partition's table unless it exists; a failure is reported, never raised.

        Returns True when this call wrote it.
        """
        try:
            return write_once(self.fs, self.local, self.path(part), lambda dest: write_parquet(dest, columns))
        except Exception as exc:  # noqa: BLE001 - the job must finish whatever the store does
            self.report(part, exc)
            return False


def write_once(fs: Any, local: bool, path: str, write: Any) -> bool:
    """Writes a file unless it exists, atomically; ``write(dest)`` writes the content to a local path
    (local stores) or into an open binary stream (others).

    Returns False when the file was already there (the first write wins). Locally through a
    temporary file and a hard link (which fails when the name exists); on object stores one
    object write is atomic; elsewhere (HDFS) a rename.
    """
    if file_exists(fs, local, path):
        return False
    folder = path.rsplit("/", 1)[0]
    tmp = f"{folder}/.tmp-{uuid.uuid4().hex}"
    if local:
        os.makedirs(folder, exist_ok=True)
        try:
            write(tmp)
            os.link(tmp, path)
        except FileExistsError:
            return False
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        return True
    if fs.type_name in ("s3", "gcs"):
        with fs.open_output_stream(path) as out:
            write(out)
        return True
    fs.create_dir(folder, recursive=True)
    with fs.open_output_stream(tmp) as out:
        write(out)
    if file_exists(fs, local, path):
        fs.delete_file(tmp)
        return False
    fs.move(tmp, path)
    return True


STAGE_KEY = b"lineage.stage_id"


def stamped(table: Any) -> Any:
    """``table`` with the stage id of the Spark task writing it in its schema metadata (as it is
    outside a task)."""
    try:
        from pyspark.taskcontext import TaskContext

        context = TaskContext.get()
    except ImportError:
        context = None
    if context is None:
        return table
    return table.replace_schema_metadata({**(table.schema.metadata or {}), STAGE_KEY: str(context.stageId()).encode()})


def rows_and_stage(store: StoreFS, path: str) -> tuple[int, int | None]:
    """A table's row count and the stage id it was written in (None: written outside a task, or
    by an older agent), from one read of its footer."""
    pf = parquet_file(store, path)
    value = (pf.schema_arrow.metadata or {}).get(STAGE_KEY)
    return int(pf.metadata.num_rows), int(value) if value is not None else None


def write_parquet(sink: Any, columns: dict[str, Any]) -> None:
    """One table with our encodings (see the module docstring)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = stamped(pa.table(columns))
    options = parquet_options(table.schema)
    size = options.pop("row_group_size")
    with pq.ParquetWriter(sink, table.schema, **options) as writer:
        write_groups(writer, table, size)


def write_groups(writer: Any, table: Any, size: int) -> None:
    """Appends ``table`` to a ParquetWriter in the row groups ``group_bounds`` cuts."""
    if not table.num_rows:
        writer.write_table(table, row_group_size=size)
    for start, stop in group_bounds(table, size):
        writer.write_table(table.slice(start, stop - start), row_group_size=size)


def group_bounds(table: Any, size: int) -> list[tuple[int, int]]:
    """(start, stop) rows of ``table``'s row groups: at most ``size`` rows each and, where rows hold
    lists of ids, a new group each time about ``ROW_GROUP_IDS`` ids have gone by, and one of its own
    for a row holding as many. Reading one row back then decodes about that many ids, where a group
    of ``size`` rows of a word count's first (most frequent) keys held millions."""
    import functools

    import pyarrow as pa
    import pyarrow.compute as pc

    rows = table.num_rows
    starts = set(range(0, rows, size))
    lengths = [pc.cast(pc.fill_null(pc.list_value_length(column), 0), pa.int64())
               for column, field in zip(table.columns, table.schema, strict=True) if pa.types.is_list(field.type)]
    if lengths and rows > 1:
        weight = functools.reduce(pc.add, lengths)
        before = pc.subtract(pc.cumulative_sum(weight), weight)  # ids in the rows before each row
        bucket = pc.divide(before, pa.scalar(ROW_GROUP_IDS, pa.int64()))  # integer division
        moved = pc.not_equal(bucket.slice(1), bucket.slice(0, rows - 1))
        starts.update(i + 1 for i in pc.indices_nonzero(moved).to_pylist())
        for i in pc.indices_nonzero(pc.greater_equal(weight, ROW_GROUP_IDS)).to_pylist():
            starts.update((i, i + 1))
    bounds = sorted(s for s in starts if s < rows)
    return list(zip(bounds, [*bounds[1:], rows], strict=True)) if rows else []


def parquet_options(schema: Any) -> dict[str, Any]:
    """Our encodings of a table's columns (delta integers, uncompressed id sets, no dictionary),
    and its row group size."""
    import pyarrow as pa

    encodings: dict[str, str] = {}
    compression: dict[str, str] = {}
    for field in schema:
        name, kind = field.name, field.type
        if pa.types.is_integer(kind):
            encodings[name] = _INT_ENCODING
        elif pa.types.is_list(kind) and pa.types.is_integer(kind.value_type):
            encodings[f"{name}.list.element"] = _INT_ENCODING  # sorted ids: small deltas
        compression[name] = "NONE" if pa.types.is_binary(kind) and name.startswith("in_ids") else "SNAPPY"
    has_sets = any(pa.types.is_binary(f.type) or pa.types.is_list(f.type) for f in schema)
    size = ROW_GROUP_HEADS if "first" in schema.names else ROW_GROUP_SETS if has_sets else ROW_GROUP
    return {"row_group_size": size, "use_dictionary": False,
            "column_encoding": encodings, "compression": compression}


class TableStream:
    """A partition's table written in pieces (by a task that spilled): each ``write`` appends row
    groups to a local temporary file, and ``close`` publishes it once, like ``TableTarget.write``.

    Duck-types ``TableTarget.write``, so the layouts' writers write pieces unchanged: a piece's
    ``out_id`` column (dense ids from 0) is shifted by the rows written before it.
    """

    def __init__(self, target: TableTarget, part: int) -> None:
        self.target = target
        self.part = part
        self.rows = 0
        self.failed = False
        self._writer: Any = None
        self._size = 0  # rows per row group, from the first piece's schema
        folder = target.location if target.local else None
        if folder is not None:
            os.makedirs(folder, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=".tmp-stream-", dir=folder)
        os.close(fd)

    def write(self, part: int, columns: dict[str, Any]) -> bool:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        if self.failed:
            return False
        try:
            if self.rows and "out_id" in columns:
                columns = {**columns, "out_id": pc.add(columns["out_id"], pa.scalar(self.rows, pa.int64()))}
            table = stamped(pa.table(columns))
            if self._writer is None:
                options = parquet_options(table.schema)
                self._size = options.pop("row_group_size")
                self._writer = pq.ParquetWriter(self._tmp, table.schema, **options)
            write_groups(self._writer, table, self._size)
            self.rows += table.num_rows
            return True
        except Exception as exc:  # noqa: BLE001 - the job must finish whatever the store does
            self._fail(exc)
            return False

    def close(self) -> bool:
        """Publishes the table (unless a piece failed or it exists); True when this call wrote it."""
        import shutil

        try:
            if self.failed or self._writer is None:
                return False
            self._writer.close()

            def publish(dest: Any) -> None:
                if isinstance(dest, str):
                    os.replace(self._tmp, dest)
                else:
                    with open(self._tmp, "rb") as f:
                        shutil.copyfileobj(f, dest, 1 << 20)

            return write_once(self.target.fs, self.target.local, self.target.path(self.part), publish)
        except Exception as exc:  # noqa: BLE001 - the job must finish whatever the store does
            self._fail(exc)
            return False
        finally:
            self._discard()

    def _fail(self, exc: BaseException) -> None:
        self.failed = True
        self.target.report(self.part, exc)
        self._discard()

    def _discard(self) -> None:
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception:  # noqa: BLE001 - already failing or closed
                pass
            self._writer = None
        try:
            os.unlink(self._tmp)
        except FileNotFoundError:
            pass


def parquet_file(store: StoreFS, path: str) -> Any:
    import pyarrow.parquet as pq

    if store.is_local:
        return pq.ParquetFile(path)
    return pq.ParquetFile(store.fs.open_input_file(path))


def num_rows(store: StoreFS, path: str) -> int:
    return int(parquet_file(store, path).metadata.num_rows)


def read_rows(store: StoreFS, path: str, columns: Sequence[str], rows: Sequence[int] | None = None) -> Any:
    """Columns of a table, or only ``rows`` of it (reading just the row groups that hold them)."""
    return take_rows(parquet_file(store, path), columns, rows)


TAKE_BATCH = 16384  # rows decoded at a time when taking rows from a row group


def take_rows(pf: Any, columns: Sequence[str] | None, rows: Sequence[int] | None) -> Any:
    """Columns (None: all) of an open ParquetFile, or only ``rows`` of it (in that order; rows past
    the end are left out). A row group is decoded a batch of ``TAKE_BATCH`` rows at a time, up to
    the batch holding its last wanted row, each batch's wanted rows taken as it comes: a source
    row group of 122,880 rows and 34 columns decodes to 46 MB, so a trace of a few rows read whole
    groups of every file it reached (and every one at once) before."""
    import pyarrow as pa

    names = list(columns) if columns is not None else pf.schema_arrow.names
    if rows is None:
        return pf.read(columns=names)
    meta = pf.metadata
    starts = []
    total = 0
    for g in range(meta.num_row_groups):
        starts.append(total)
        total += meta.row_group(g).num_rows
    wanted = [r for r in rows if r < total]
    order = sorted(set(wanted))
    pieces = []
    i = 0
    while i < len(order):
        group = bisect.bisect_right(starts, order[i]) - 1
        j = bisect.bisect_left(order, starts[group] + meta.row_group(group).num_rows, i)
        pieces.extend(_taken_in_group(pf, group, names, [r - starts[group] for r in order[i:j]]))
        i = j
    if not pieces:
        return pf.schema_arrow.empty_table().select(names)
    table = pa.Table.from_batches(pieces)
    if wanted == order:
        return table
    at = {r: n for n, r in enumerate(order)}
    return table.take(pa.array([at[r] for r in wanted], type=pa.int64()))


def _taken_in_group(pf: Any, group: int, names: list[str], local: list[int]) -> list[Any]:
    """The record batches of the rows ``local`` (sorted, within row group ``group``)."""
    import pyarrow as pa

    out = []
    offset = done = 0
    for batch in pf.iter_batches(batch_size=TAKE_BATCH, row_groups=[group], columns=names):
        stop = offset + batch.num_rows
        upto = bisect.bisect_left(local, stop, done)
        if upto > done:
            out.append(batch.take(pa.array([r - offset for r in local[done:upto]], type=pa.int64())))
            done = upto
        offset = stop
        if done == len(local):
            break
    return out


def write_partial(target: TableTarget, part: int, columns: dict[str, Any]) -> None:
    """Replaces a partition's partial input table (a longer prefix replaces a shorter one)."""
    import io

    try:
        buffer = io.BytesIO()
        write_parquet(buffer, columns)
        if target.local:
            os.makedirs(target.location, exist_ok=True)
        replace_file(target.fs, target.local, target.partial_path(part), buffer.getvalue())
    except Exception as exc:  # noqa: BLE001 - the job must finish whatever the store does
        target.report(part, exc)


def partial_rows(target: TableTarget, part: int) -> int:
    """Rows of a partition's partial input table (0 when there is none)."""
    import pyarrow.parquet as pq

    path = target.partial_path(part)
    if not file_exists(target.fs, target.local, path):
        return 0
    source = path if target.local else target.fs.open_input_file(path)
    return int(pq.ParquetFile(source).metadata.num_rows)


def table_exists(target: TableTarget, part: int) -> bool:
    return file_exists(target.fs, target.local, target.path(part))


def remove_partial(target: TableTarget, part: int) -> None:
    path = target.partial_path(part)
    if file_exists(target.fs, target.local, path):
        if target.local:
            os.unlink(path)
        else:
            target.fs.delete_file(path)
