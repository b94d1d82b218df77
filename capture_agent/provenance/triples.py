"""Provenance triples: (source item, derived item, operation), as any workflow system gives them.

A triple says that item ``dst`` was derived from item ``src`` by operation ``op`` (its name and
any metadata, as text). Items are strings (integers are taken as their decimal text).
``src_dataset`` and ``dst_dataset`` optionally name the dataset (table) each item belongs to: the
workflow's dataset graph, along which large components are split, is made of them. Triples come
as JSON lines (one object a line) or Parquet; either is checked, normalised to ``SCHEMA`` and
written as one Parquet file. A wrong input raises ``TripleError`` saying where and what.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Any

COLUMNS = ("src", "dst", "op", "src_dataset", "dst_dataset")
REQUIRED = ("src", "dst")
FORMATS = ("jsonl", "parquet")
_BLOCK = 16 << 20  # bytes of JSON lines parsed at a time
_ROWS = 1 << 20  # rows of Parquet read at a time


class TripleError(ValueError):
    """Triples that cannot be taken: the message says where (line or row) and what is wrong."""


def schema() -> Any:
    """The Arrow schema triples are stored in."""
    import pyarrow as pa

    return pa.schema([
        pa.field("src", pa.string(), nullable=False),
        pa.field("dst", pa.string(), nullable=False),
        pa.field("op", pa.string()),
        pa.field("src_dataset", pa.string()),
        pa.field("dst_dataset", pa.string()),
    ])


def read_triples(path: str, fmt: str) -> Iterator[Any]:
    """The triples of a local file as Arrow tables of ``schema()``, a block at a time.

    Raises:
        TripleError: the file is not valid triples of that format.
    """
    if fmt == "parquet":
        yield from _read_parquet(path)
    elif fmt == "jsonl":
        yield from _read_jsonl(path)
    else:
        raise TripleError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")


def write_triples(tables: Iterator[Any], sink: IO[bytes]) -> int:
    """Writes tables of the triples' columns to ``sink`` as one Parquet file; returns the rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    target = schema()
    rows = 0
    with pq.ParquetWriter(sink, target, compression="zstd") as writer:
        for table in tables:
            table = pa.Table.from_arrays([table.column(f.name) for f in target], schema=target)
            writer.write_table(table, row_group_size=_ROWS)
            rows += table.num_rows
    return rows


def normalise(table: Any, first_row: int, where: str = "row") -> Any:
    """``table`` checked and cast to ``schema()`` (its rows are numbered from ``first_row``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    unknown = [c for c in table.column_names if c not in COLUMNS]
    if unknown:
        raise TripleError(f"unknown field {unknown[0]!r}: a triple has {', '.join(COLUMNS)}")
    columns = []
    for field in schema():
        if field.name not in table.column_names:
            if field.name in REQUIRED:
                raise TripleError(f"{where} {first_row}: {field.name!r} is missing (every triple needs src and dst)")
            columns.append(pa.nulls(table.num_rows, pa.string()))
            continue
        column = table.column(field.name)
        kind = column.type
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind)
                or pa.types.is_null(kind)):
            raise TripleError(f"{field.name!r} must be a string or an integer, not {kind}")
        column = column.cast(pa.string())
        if field.name in REQUIRED and column.null_count:
            bad = pc.indices_nonzero(pc.is_null(column))[0].as_py()
            raise TripleError(f"{where} {first_row + bad}: {field.name!r} is missing (every triple needs src and dst)")
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema())


def _read_parquet(path: str) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise TripleError(f"not a Parquet file: {exc}") from None
    row = 0
    for batch in pf.iter_batches(batch_size=_ROWS):
        table = pa.Table.from_batches([batch])
        yield normalise(table, row)
        row += table.num_rows


def _read_jsonl(path: str) -> Iterator[Any]:
    """Arrow's reader for the common case; lines read one by one (exact line numbers, ids that are
    numbers on some lines and strings on others) when it refuses the file."""
    import pyarrow as pa
    import pyarrow.json as pj

    try:
        reader = pj.open_json(path, read_options=pj.ReadOptions(block_size=_BLOCK))
        tables = []
        row = 1
        for batch in reader:
            table = pa.Table.from_batches([batch])
            tables.append(normalise(table, row, "line"))
            row += table.num_rows
    except (pa.ArrowInvalid, TripleError):
        yield from _read_jsonl_lines(path)
        return
    yield from tables


def _read_jsonl_lines(path: str) -> Iterator[Any]:
    import pyarrow as pa

    rows: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    first = 1
    with open(path, "rb") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as exc:
                raise TripleError(f"line {number}: not JSON ({exc})") from None
            if not isinstance(obj, dict):
                raise TripleError(f"line {number}: a triple is a JSON object, not {type(obj).__name__}")
            for name, value in obj.items():
                if name not in rows:
                    raise TripleError(f"line {number}: unknown field {name!r}: a triple has {', '.join(COLUMNS)}")
                if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
                    raise TripleError(f"line {number}: {name!r} must be a string or an integer")
            for name in COLUMNS:
                value = obj.get(name)
                if value is None and name in REQUIRED:
                    raise TripleError(f"line {number}: {name!r} is missing (every triple needs src and dst)")
                rows[name].append(None if value is None else str(value))
            if len(rows["src"]) >= _ROWS:
                yield pa.Table.from_pydict(rows, schema=schema())
                rows = {c: [] for c in COLUMNS}
                first = number + 1
    if rows["src"] or first == 1:
        yield pa.Table.from_pydict(rows, schema=schema())
