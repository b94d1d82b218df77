"""Input layouts: where each input record comes from, so a trace can show it as it is in the source.

| layout | columns | meaning |
|---|---|---|
| text | out_id, offset (uint32) | input lines; position = line number in its split, offset from the split's start |
| values | out_id, value, text | parallelize input; pickled values kept |
| rows | local_start, file, row_start, count | Parquet input; segments of (file, row index) |
| file_rows | (none: the files are the table) | a captured DataFrame's Parquet source; id (file, row index) |
| file_lines | (none: the files are the table) | a captured DataFrame's text, CSV, JSON source; id (file, offset) |

Text inputs (and CSV read as text) record each split's file and start and each file's size and
modification time: a trace over a file that changed since capture says so. A text input that
reads the part files of an earlier ``saveAsTextFile`` of the same run has that output as its
parent, and traces chain through it; so does a ``file_rows`` source reading the Parquet part files
a captured DataFrame wrote (a ``frame_write`` point), and ``storage.chains`` links both kinds
across runs.
"""

from __future__ import annotations

import bisect
import pickle
from array import array
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pyroaring import BitMap, BitMap64

from capture_agent.record.errors import InputChangedError, ValuesNotAvailable
from capture_agent.record.storage.fs import StoreFS, file_key
from capture_agent.record.storage.ids import LOW_MASK, SHIFT, id_array, split_by_partition
from capture_agent.record.storage.layouts.base import (
    CapturePoint,
    Layout,
    Position,
    Predicate,
    StepContext,
    dense_out_ids,
    filtered,
    i64_column,
    u32_column,
)
from capture_agent.record.storage.sources import csv_parser, line_starts, source_status, text_unit
from capture_agent.record.storage.spark_rows import CsvRows, JsonRows, schema_fields, typed_rows
from capture_agent.record.storage.tables import (
    TableTarget,
    partial_rows,
    read_rows,
    remove_partial,
    table_exists,
    take_rows,
    write_partial,
)

TEXT_UNIT_COST = 4096  # a sparse line costs about a page read


def check_files(files: list[dict[str, Any]], indexes: set[int] | None = None) -> None:
    """Raises InputChangedError when a recorded input file changed since capture."""
    for i, info in enumerate(files):
        if indexes is not None and i not in indexes:
            continue
        recorded = (info["size"], info["mtime"])
        current = source_status(info["path"])
        if current is None:
            raise InputChangedError(info["path"], recorded, None)
        if current[0] != recorded[0] or abs(current[1] - recorded[1]) > 1:
            raise InputChangedError(info["path"], recorded, current)


class InputLayout(Layout):
    """Input records: deleted only when selected (the base ``deletion`` gives Token for kind input)."""

    def files_read(self) -> list[str]:
        return [str(f["path"]) for f in getattr(self, "files", [])]

    def in_ids(self, table: Any, part: int, nparents: int) -> list[BitMap64]:
        return [BitMap64()]


def read_text_units(ctx: StepContext, units: list[tuple[Any, ...]], files: list[dict[str, Any]],
                    ) -> list[tuple[int, Any]]:
    """(id, line or row) of ``text_unit``s over ``files``, in Spark tasks when they cost enough (a
    sparse line about a page read, at most its whole file)."""
    sizes = {info["path"]: info["size"] for info in files}
    cost = sum(min(len(u[1]) * TEXT_UNIT_COST, sizes[u[0]]) for u in units)
    out: list[tuple[int, Any]] = []
    for chunk in ctx.run_units(text_unit, units, cost):
        out.extend(chunk)
    return out


def write_text_input(target: TableTarget, part: int, offsets: array, complete: bool, base: int = 0) -> None:
    """Line number -> byte offset from the split's start. ``offsets`` are array('q') file
    offsets (minus ``base``, the split's start) or array('I') relative offsets. A split read
    only partly (take) keeps a partial table, replaced by longer prefixes and by the full one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if offsets.typecode == "q":
        relative = pc.cast(pc.subtract(i64_column(offsets), pa.scalar(base, pa.int64())), pa.uint32())
    else:
        relative = u32_column(offsets)
    columns = {"out_id": dense_out_ids(part, len(offsets)), "offset": relative}
    try:
        if complete:
            target.write(part, columns)
            remove_partial(target, part)
            return
        if table_exists(target, part) or partial_rows(target, part) >= len(offsets):
            return
    except Exception as exc:  # noqa: BLE001 - the job must finish whatever the store does
        target.report(part, exc)
        return
    write_partial(target, part, columns)


@dataclass
class Text(InputLayout):
    """textFile and csv: ids (split, line number); each line's byte offset from its split's start."""

    name: ClassVar[str] = "text"
    source_values: ClassVar[bool] = True
    columns: ClassVar[tuple[str, ...]] = ("out_id", "offset")

    format: str = "text"  # or "csv"
    source: str = ""  # the path(s) given to textFile/csv
    files: list[dict[str, Any]] = field(default_factory=list)  # {path, size, mtime}
    splits: list[list[int]] = field(default_factory=list)  # [file index, start, length]
    header: bool = False
    sep: str = ","
    quote: str = '"'
    fields: list[str] = field(default_factory=list)  # CSV column names

    write = staticmethod(write_text_input)  # task side

    # ------------------------------------------------------------------ lines
    def line_offsets(self, store: StoreFS, point: CapturePoint, part: int, positions: list[int]) -> list[int]:
        """Byte offsets (from the split's start) of the given line numbers of one split."""
        path = point.table_path(part)
        if not store.exists(path):
            path = point.partial_path(part)
        if not store.exists(path):
            raise ValuesNotAvailable(f"no line offsets of split {part} of {point.capture_id}")
        column = read_rows(store, path, ["offset"], positions).column("offset").to_pylist()
        if len(column) != len(positions):
            raise ValuesNotAvailable(f"lines {positions[len(column):][:3]}... of split {part} were never read")
        return list(column)

    def text_units(self, store: StoreFS, point: CapturePoint, ids: BitMap64,
                   predicate: Predicate) -> list[tuple[Any, ...]]:
        """One ``text_unit`` per split holding ids: (file, ids, byte offsets, parser, predicate)."""
        parts = list(split_by_partition(ids))
        check_files(self.files, {self.splits[p][0] for p, _ in parts})
        parse = csv_parser(self.fields, self.sep, self.quote) if self.format == "csv" else None
        units = []
        for p, bm in parts:
            positions = list(bm)
            start = self.splits[p][1]
            offsets = [start + o for o in self.line_offsets(store, point, p, positions)]
            units.append((self.files[self.splits[p][0]]["path"], [(p << SHIFT) | x for x in positions], offsets,
                          parse, predicate))
        return units

    def values(self, ctx: StepContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        return read_text_units(ctx, self.text_units(ctx.fs, point, ids, predicate), self.files)

    def positions(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> list[Position] | None:
        out: list[Position] = []
        for part, bm in split_by_partition(ids):
            file_index, start, _ = self.splits[part]
            path = self.files[file_index]["path"]
            out.extend(Position(path, start + o) for o in self.line_offsets(ctx.fs, point, part, list(bm)))
        return out

    # ------------------------------------------------------------------ chaining through saved text
    def backward(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> dict[str, BitMap64]:
        """Input lines that an earlier saveAsTextFile wrote -> that output's records; lines of
        other files stay here (under this point's id: they start here)."""
        result: dict[str, BitMap64] = {}
        for part, positions in split_by_partition(ids):
            file_index, start, _ = self.splits[part]
            uri = self.files[file_index]["path"]
            saved = False
            for parent_id in point.parents:
                save = ctx.point(parent_id)
                prefix = _save_prefix(save)
                name = uri[len(prefix):]
                if uri.startswith(prefix) and name.startswith("part-"):
                    saved = True
                    hi = int(name[5:].split(".")[0].split("-")[0]) << SHIFT
                    offsets = self.line_offsets(ctx.fs, point, part, list(positions))
                    records = BitMap64([hi | (start + o) for o in offsets])
                    result.setdefault(parent_id, BitMap64()).__ior__(records)
            if not saved:
                result.setdefault(point.capture_id, BitMap64()).update((part << SHIFT) | p for p in positions)
        return result

    def forward(self, ctx: StepContext, child: CapturePoint, parent_id: str, ids: BitMap64) -> BitMap64:
        """Records of an earlier saveAsTextFile -> the lines of this later text input that read them."""
        prefix = _save_prefix(ctx.point(parent_id))
        store = ctx.fs
        out = BitMap64()
        for part, offsets in split_by_partition(ids):
            wanted = set(offsets)
            for k, (file_index, start, length) in enumerate(self.splits):
                uri = self.files[file_index]["path"]
                if not uri.startswith(prefix) or not uri[len(prefix):].startswith(f"part-{part:05d}"):
                    continue
                path = child.table_path(k) if store.exists(child.table_path(k)) else child.partial_path(k)
                if not store.exists(path) or not any(start <= o <= start + length for o in wanted):
                    continue
                relative = read_rows(store, path, ["offset"]).column("offset").to_pylist()
                out |= BitMap64([(k << SHIFT) | line for line, o in enumerate(relative) if start + o in wanted])
        return out


def _save_prefix(save: CapturePoint) -> str:
    return str(getattr(save.layout, "path", "")).rstrip("/") + "/"


def reads_save(files: list[dict[str, Any]], save: CapturePoint) -> bool:
    """Whether a text input of these files ({path, ...}) reads part files of a saveAsTextFile point
    (its lines are then that output's records: ``Text.backward`` and ``forward`` chain through it)."""
    if not getattr(save.layout, "path", ""):
        return False
    prefix = _save_prefix(save)
    return any(str(f["path"]).startswith(prefix) for f in files)


def write_values(target: TableTarget, part: int, pickles: list[bytes], texts: list[str]) -> None:
    import pyarrow as pa

    target.write(part, {"out_id": dense_out_ids(part, len(pickles)), "value": pa.array(pickles, type=pa.binary()),
                        "text": pa.array(texts, type=pa.string())})


@dataclass
class Values(InputLayout):
    """parallelize: ids (partition, index); each task keeps its partition's values (pickled)."""

    name: ClassVar[str] = "values"
    columns: ClassVar[tuple[str, ...]] = ("out_id", "value", "text")

    format: str = "collection"

    write = staticmethod(write_values)

    def values(self, ctx: StepContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        out: list[tuple[int, Any]] = []
        for part, positions in split_by_partition(ids):
            rows = list(positions)
            blobs = read_rows(ctx.fs, point.table_path(part), ["value"], rows).column("value").to_pylist()
            hi = part << SHIFT
            out.extend((hi | r, pickle.loads(b)) for r, b in zip(rows, blobs, strict=True))
        return filtered(out, predicate)


def write_rows(target: TableTarget, part: int, starts: list[int], files: list[str], rows: list[int],
          counts: list[int]) -> None:
    import pyarrow as pa

    target.write(part, {"local_start": pa.array(starts, type=pa.int64()), "file": pa.array(files, type=pa.string()),
                        "row_start": pa.array(rows, type=pa.int64()), "count": pa.array(counts, type=pa.int64())})


@dataclass
class Rows(InputLayout):
    """Parquet through the DataFrame reader: ids (partition, i), kept as (file, row index) segments
    from ``_metadata``, which do not depend on how Spark packs files into partitions."""

    name: ClassVar[str] = "rows"
    source_values: ClassVar[bool] = True
    columns: ClassVar[tuple[str, ...]] = ("local_start", "file", "row_start", "count")

    format: str = "parquet"
    paths: list[str] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)

    write = staticmethod(write_rows)

    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        out = BitMap64()
        for part in point.partition_rows(store):
            counts = read_rows(store, point.table_path(part), ["count"]).column("count").to_pylist()
            if sum(counts):
                out.add_range(part << SHIFT, (part << SHIFT) + sum(counts))
        return out

    def _locate(self, store: StoreFS, point: CapturePoint, ids: BitMap64) -> list[tuple[int, str, int]]:
        """(record id, file, row index) of each id, in id order."""
        out = []
        for part, positions in split_by_partition(ids):
            segments = read_rows(store, point.table_path(part), list(self.columns)).to_pydict()
            starts = segments["local_start"]
            for pos in positions:
                s = bisect.bisect_right(starts, pos) - 1
                out.append(((part << SHIFT) | pos, segments["file"][s], segments["row_start"][s] + pos - starts[s]))
        return out

    def values(self, ctx: StepContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        return filtered(self.rows(ctx.fs, point, ids), predicate)

    def rows(self, store: StoreFS, point: CapturePoint, ids: BitMap64) -> list[tuple[int, Any]]:
        """(id, Row) of the records behind ids, read from their Parquet files, sorted by id."""
        check_files(self.files)
        located: dict[str, list[tuple[int, int]]] = {}
        for record_id, file_uri, row in self._locate(store, point, ids):
            located.setdefault(file_uri, []).append((record_id, row))
        out: list[tuple[int, Any]] = []
        for file_uri, wanted in located.items():
            values = parquet_rows_at(file_uri, [r for _, r in wanted])
            out.extend((record_id, value) for (record_id, _), value in zip(wanted, values, strict=True))
        out.sort(key=lambda t: t[0])
        return out

    def positions(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> list[Position] | None:
        return [Position(file_uri, row) for _, file_uri, row in self._locate(ctx.fs, point, ids)]


@dataclass
class FileRows(InputLayout):
    """Parquet or ORC rows of a captured DataFrame: id (file index, row index), the file's index in
    ``files`` (each with its row count) and the row's index in the file (Parquet:
    ``_metadata.row_index``; ORC: its row number, ``java/lineage/sql/Orc.java``). Nothing is
    written at capture: the files are the table."""

    name: ClassVar[str] = "file_rows"
    source_values: ClassVar[bool] = True
    columns: ClassVar[tuple[str, ...]] = ()
    virtual: ClassVar[bool] = False

    format: str = "parquet"
    paths: list[str] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)  # path, size, mtime, rows
    # the columns of partition directories (key=value): [name, Spark's type], after the files' own
    partitions: list[list[str]] = field(default_factory=list)
    schema: str = ""  # the frame's schema (StructType JSON): rows are typed and named by it

    def record_fields(self) -> list[str] | None:
        return schema_fields(self.schema) or None

    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        out = BitMap64()
        for index, info in enumerate(self.files):
            if info["rows"]:
                out.add_range(index << SHIFT, (index << SHIFT) + info["rows"])
        return out

    def values(self, ctx: StepContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        return filtered(self.rows(ids), predicate)

    def rows(self, ids: BitMap64) -> list[tuple[int, Any]]:
        """(id, Row) of the records behind ids, read from their files, sorted by id."""
        out: list[tuple[int, Any]] = []
        read = orc_rows_at if self.format == "orc" else parquet_rows_at
        for index, positions in split_by_partition(ids):
            check_files(self.files, {index})
            wanted = list(positions)
            path = self.files[index]["path"]
            values = read(path, wanted)
            if self.partitions:
                values = with_partition_values(values, path, self.partitions)
            values = typed_rows(values, self.schema)
            out.extend(((index << SHIFT) | row, value) for row, value in zip(wanted, values, strict=True))
        return out

    def positions(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> list[Position] | None:
        return [Position(self.files[index]["path"], row) for index, positions in split_by_partition(ids)
                for row in positions]

    def places(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> tuple[Any, Any] | None:
        """The files and rows of ids as columns, computed from the ids (a trace reaching 200,000
        rows made as many ``Position`` tuples)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        record_ids = id_array(ids)
        paths = pa.array([str(f["path"]) for f in self.files], pa.string())
        return (paths.take(pc.shift_right(record_ids, SHIFT)),
                pc.bit_wise_and(record_ids, pa.scalar(LOW_MASK, pa.int64())))

    # ------------------------------------------------------------------ chaining through written Parquet
    def backward(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> dict[str, BitMap64]:
        """Rows of part files an earlier captured write made -> that write's records; rows of other
        files stay here (under this point's id: they start here)."""
        writes = {parent_id: _written_files(ctx.point(parent_id)) for parent_id in point.parents}
        result: dict[str, BitMap64] = {}
        for index, rows in split_by_partition(ids):
            key = file_key(self.files[index]["path"])
            parent_id = next((p for p, written in writes.items() if key in written), None)
            if parent_id is None:
                result.setdefault(point.capture_id, BitMap64()).update((index << SHIFT) | r for r in rows)
                continue
            part_file = writes[parent_id][key]
            hi, start = part_file["part"] << SHIFT, part_file["row_start"]
            result.setdefault(parent_id, BitMap64()).update(hi | (start + r) for r in rows)
        return result

    def forward(self, ctx: StepContext, child: CapturePoint, parent_id: str, ids: BitMap64) -> BitMap64:
        """Records of an earlier captured write -> the rows of this source that read them."""
        mine = {file_key(info["path"]): index for index, info in enumerate(self.files)}
        by_part: dict[int, list[tuple[int, int, int]]] = {}  # part -> (row_start, rows, index here)
        for key, part_file in _written_files(ctx.point(parent_id)).items():
            if key in mine:
                by_part.setdefault(part_file["part"], []).append(
                    (part_file["row_start"], part_file["rows"], mine[key]))
        out = BitMap64()
        for part, positions in split_by_partition(ids):
            for start, rows, index in by_part.get(part, ()):
                hi = index << SHIFT
                within = positions & BitMap(range(start, start + rows)) if len(positions) > 64 else \
                    [r for r in positions if start <= r < start + rows]
                out |= BitMap64([hi | (r - start) for r in within])
        return out


@dataclass
class FileLines(InputLayout):
    """Lines of text files a captured DataFrame read in the JVM (``lc.read.text``, ``csv``,
    ``json``; ``java/lineage/sql/Lines.java``): id (file index, the line's byte offset in the file).
    Nothing is written at capture: the files are the table. CSV and JSON Lines have no ids for blank
    lines, nor CSV with a header for each file's first line, as Spark's readers give no rows for them.
    A trace shows a text line as it is, and a CSV or JSON line as the row the frame read of it
    (``schema``: the frame's, ``storage.spark_rows``; runs captured before it was kept: the JSON
    line as it is, CSV string fields)."""

    name: ClassVar[str] = "file_lines"
    source_values: ClassVar[bool] = True
    columns: ClassVar[tuple[str, ...]] = ()

    format: str = "text"  # or "csv", "json"
    source: str = ""  # the path(s) given to the reader
    files: list[dict[str, Any]] = field(default_factory=list)  # {path, size, mtime}
    header: bool = False
    sep: str = ","
    quote: str = '"'
    fields: list[str] = field(default_factory=list)  # CSV column names
    schema: str = ""  # the frame's schema (StructType JSON) of a CSV or JSON read

    def record_fields(self) -> list[str] | None:
        if self.format == "text":
            return None
        return schema_fields(self.schema) or (list(self.fields) if self.format == "csv" else None)

    def parser(self) -> Any:
        """Line -> record: the frame's row (CSV, JSON with a schema), CSV string fields, or None
        (the line itself)."""
        if self.schema and self.format == "json":
            return JsonRows(self.schema)
        if self.schema and self.format == "csv":
            return CsvRows(self.schema, self.sep, self.quote)
        return csv_parser(self.fields, self.sep, self.quote) if self.format == "csv" else None

    def all_ids(self, store: StoreFS, point: CapturePoint) -> BitMap64:
        check_files(self.files)
        out = BitMap64()
        for index, info in enumerate(self.files):
            hi = index << SHIFT
            out.update(hi | s for s in line_starts(info["path"], self.format != "text", self.header))
        return out

    def text_units(self, store: StoreFS, point: CapturePoint, ids: BitMap64,
                   predicate: Predicate) -> list[tuple[Any, ...]]:
        """One ``text_unit`` per file holding ids: (file, ids, byte offsets, parser, predicate)."""
        parts = list(split_by_partition(ids))
        check_files(self.files, {index for index, _ in parts})
        parse = self.parser()
        return [(self.files[index]["path"], [(index << SHIFT) | o for o in offsets], list(offsets), parse, predicate)
                for index, offsets in parts]

    def values(self, ctx: StepContext, point: CapturePoint, ids: BitMap64,
               predicate: Predicate) -> list[tuple[int, Any]] | None:
        return read_text_units(ctx, self.text_units(ctx.fs, point, ids, predicate), self.files)

    def positions(self, ctx: StepContext, point: CapturePoint, ids: BitMap64) -> list[Position] | None:
        return [Position(self.files[index]["path"], offset) for index, offsets in split_by_partition(ids)
                for offset in offsets]


def parquet_rows_at(uri: str, rows: list[int]) -> list[Any]:
    """Rows (pyspark Rows) at the given row indexes of one Parquet file, in that order."""
    import pyarrow.parquet as pq

    from capture_agent.record.storage.sources import open_source

    with open_source(uri) as f:
        return _rows_of(take_rows(pq.ParquetFile(f), None, rows))


HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"  # a null key's directory, as Spark writes it


def partition_value(text: str, spark_type: str) -> Any:
    """A partition directory's value (``key=<text>``, escaped as Spark escapes path names) as
    Spark reads it for a column of ``spark_type`` (its simpleString)."""
    import datetime
    import decimal
    from urllib.parse import unquote

    if text == HIVE_NULL:
        return None
    value = unquote(text)
    if spark_type in ("tinyint", "smallint", "int", "bigint"):
        return int(value)
    if spark_type in ("float", "double"):
        return float(value)
    if spark_type == "boolean":
        return value.lower() == "true"
    if spark_type == "date":
        return datetime.date.fromisoformat(value)
    if spark_type.startswith("timestamp"):
        return datetime.datetime.fromisoformat(value)
    if spark_type.startswith("decimal"):
        return decimal.Decimal(value)
    return value


def directory_values(path: str) -> dict[str, str]:
    """The ``key=value`` directories of a file's path: {key: value as written (escaped)}, the
    deepest of a key."""
    found: dict[str, str] = {}
    for segment in path.split("/")[:-1]:
        key, equals, text = segment.partition("=")
        if equals:
            found[key] = text
    return found


def with_partition_values(rows: list[Any], path: str, partitions: list[list[str]]) -> list[Any]:
    """``rows`` (of the file at ``path``) with the values of its partition directories
    (``partitions``: [name, Spark's type]; ``directory_values``) after their own columns, as
    Spark's read of the folder gives them."""
    from pyspark.sql.types import _create_row

    if not rows:
        return rows
    found = directory_values(path)
    names = list(rows[0].__fields__)  # the file's columns, the same for each of its rows
    added = [(name, partition_value(found[name], kind) if name in found else None)
             for name, kind in partitions if name not in names]
    columns = names + [name for name, _ in added]
    values = [value for _, value in added]
    return [_create_row(columns, list(row) + values) for row in rows]


def _rows_of(table: Any) -> list[Any]:
    """An Arrow table's rows as pyspark Rows."""
    from pyspark.sql.types import _create_row

    names = table.column_names
    columns = [table.column(n).to_pylist() for n in names]
    return [_create_row(names, [column[k] for column in columns]) for k in range(table.num_rows)]


def orc_rows_at(uri: str, rows: list[int]) -> list[Any]:
    """Rows (pyspark Rows) at the given row numbers of one ORC file, in that order."""
    import pyarrow as pa
    import pyarrow.orc as po

    from capture_agent.record.storage.sources import open_source

    with open_source(uri) as f:
        table = po.ORCFile(f).read().take(rows)
    for i, column in enumerate(table.schema):  # ORC's nanoseconds: Python's datetime, as Spark's rows
        if pa.types.is_timestamp(column.type) and column.type.unit == "ns":
            table = table.set_column(i, column.name, table.column(i).cast(pa.timestamp("us", column.type.tz)))
    return _rows_of(table)


def _written_files(write: CapturePoint) -> dict[str, dict[str, Any]]:
    """A ``frame_write`` point's part files by ``file_key`` (other points, reads of the same files
    among them: none)."""
    if write.layout.name != "frame_write":
        return {}
    return {file_key(f["path"]): f for f in getattr(write.layout, "files", ())}


def reads_write(files: list[dict[str, Any]], write: CapturePoint) -> bool:
    """Whether a ``file_rows`` source of these files reads part files a captured write made."""
    written = _written_files(write)
    return any(file_key(f["path"]) in written for f in files)
