"""Reading the records behind ids from the job's own files: text lines by byte offset, CSV rows.

Input and output files are named as Hadoop names them (``file:/x``, ``hdfs://nn/x``,
``s3a://bucket/x``); local ones are read directly, others through ``pyarrow.fs``.

Task-safe: ``text_unit`` runs inside Spark tasks when a trace fetches many lines.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from capture_agent.record.storage.fs import local_path

Predicate = Callable[[Any], bool] | None


def _remote(uri: str) -> tuple[Any, str] | None:
    """(pyarrow file system, path) of a non-local file name, or None for a local one."""
    if "://" not in local_path(uri):
        return None
    from pyarrow.fs import FileSystem

    return FileSystem.from_uri(uri.replace("s3a://", "s3://", 1).replace("s3n://", "s3://", 1))


def open_source(uri: str) -> Any:
    remote = _remote(uri)
    if remote is None:
        return open(local_path(uri), "rb")  # the caller closes it
    fs, path = remote
    return fs.open_input_file(path)


def source_status(uri: str) -> tuple[int, int] | None:
    """(size, modification time in ms) of a file, or None when it does not exist."""
    remote = _remote(uri)
    if remote is None:
        try:
            st = os.stat(local_path(uri))
        except FileNotFoundError:
            return None
        return st.st_size, int(st.st_mtime * 1000)
    from pyarrow.fs import FileType

    fs, path = remote
    info = fs.get_file_info(path)
    if info.type == FileType.NotFound:
        return None
    return int(info.size or 0), int(info.mtime_ns // 1_000_000) if info.mtime_ns is not None else 0


def parquet_rows(uri: str) -> int:
    """The row count of a Parquet file, from its footer."""
    import pyarrow.parquet as pq

    with open_source(uri) as f:
        return int(pq.ParquetFile(f).metadata.num_rows)


def orc_rows(uri: str) -> tuple[int, list[str]]:
    """The row count of an ORC file and its top-level column names, from its footer."""
    import pyarrow.orc as po

    with open_source(uri) as f:
        orc = po.ORCFile(f)
        return int(orc.nrows), list(orc.schema.names)


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def split_hadoop_lines(start: int, raw: bytes) -> list[tuple[int, bytes]]:
    """Hadoop's LineReader ends a line at \\n, \\r or \\r\\n; ``raw`` may hold several of them."""
    out = []
    i = 0
    n = len(raw)
    while i < n:
        j = i
        while j < n and raw[j] not in (10, 13):
            j += 1
        out.append((start + i, raw[i:j]))
        if j < n and raw[j] == 13 and j + 1 < n and raw[j + 1] == 10:
            j += 1
        i = j + 1
    return out


def line_starts(uri: str, skip_blank: bool, header: bool) -> list[int]:
    """Byte offsets of the lines of a file as Hadoop's LineReader ends them (\\n, \\r, \\r\\n);
    ``skip_blank`` leaves out lines of characters up to U+0020 only, ``header`` the first line
    left (what Spark's CSV and JSON readers leave out, and ``java/lineage/sql/Lines.java``)."""
    import numpy as np

    with open_source(uri) as f:
        data = np.frombuffer(f.read(), dtype=np.uint8)
    if not len(data):
        return []
    ends = np.flatnonzero((data == 10) | (data == 13))
    crlf = ends[:-1][(data[ends[:-1]] == 13) & (ends[1:] == ends[:-1] + 1) & (data[ends[1:]] == 10)]
    ends = np.setdiff1d(ends, crlf)  # a line ending \\r\\n ends at its \\n
    starts = np.concatenate(([0], ends + 1))
    starts = starts[starts < len(data)]
    if skip_blank:
        stops = np.append(ends, len(data))[: len(starts)]
        printable = np.concatenate(([0], np.cumsum(data > 32)))
        starts = starts[printable[stops] > printable[starts]]
    return [int(s) for s in starts[1:]] if header else [int(s) for s in starts]


def _read_dense(f: Any, offsets: list[int]) -> list[str]:
    """Many close offsets: one sequential read."""
    wanted = set(offsets)
    f.seek(offsets[0])
    position = offsets[0]
    found: dict[int, str] = {}
    pending = b""
    while position <= offsets[-1]:
        chunk = f.read(1 << 20)
        if not chunk:
            break
        data = pending + chunk
        lines = data.split(b"\n")
        pending = lines.pop()
        for raw in lines:
            pieces = [(position, raw)] if b"\r" not in raw else split_hadoop_lines(position, raw)
            for start, line in pieces:
                if start in wanted:
                    found[start] = _decode(line)
            position += len(raw) + 1
    if pending and position in wanted:
        for start, line in split_hadoop_lines(position, pending):
            if start in wanted:
                found[start] = _decode(line)
    return [found.get(o, "") for o in offsets]


def read_lines(uri: str, offsets: list[int]) -> list[str]:
    """The lines starting at the given (sorted) byte offsets of a file."""
    if not offsets:
        return []
    with open_source(uri) as f:
        span = offsets[-1] - offsets[0]
        if len(offsets) > 256 and span < 2048 * len(offsets):
            return _read_dense(f, offsets)
        out = []
        for offset in offsets:
            f.seek(offset)
            raw = _read_line(f)
            cut = len(raw)
            for terminator in (b"\n", b"\r"):
                k = raw.find(terminator)
                if k >= 0:
                    cut = min(cut, k)
            out.append(_decode(raw[:cut]))
        return out


def _read_line(f: Any) -> bytes:
    readline = getattr(f, "readline", None)
    if readline is not None:
        try:
            return bytes(readline())
        except (NotImplementedError, OSError):
            pass
    out = b""
    while True:
        chunk = f.read(4096)
        if not chunk:
            return out
        k = chunk.find(b"\n")
        if k >= 0:
            return out + chunk[: k + 1]
        out += chunk


def text_unit(uri: str, record_ids: list[int], offsets: list[int], parse: Any, predicate: Predicate,
              ) -> list[tuple[int, Any]]:
    """(id, line) for lines of one text split at the given byte offsets (``parse``: line -> Row)."""
    out = []
    for record_id, line in zip(record_ids, read_lines(uri, offsets), strict=True):
        value = parse(line) if parse is not None else line
        if predicate is None or predicate(value):
            out.append((record_id, value))
    return out


def csv_row(line: str, columns: list[str], sep: str, quote: str) -> Any:
    """One CSV line parsed like Spark's reader: string fields, empty -> None, padded to the columns."""
    import csv

    from pyspark.sql.types import _create_row

    fields = next(csv.reader([line], delimiter=sep, quotechar=quote), [])
    values: list[Any] = [f if f != "" else None for f in fields[: len(columns)]]
    values.extend([None] * (len(columns) - len(values)))
    return _create_row(columns, values)


def csv_parser(columns: list[str], sep: str, quote: str) -> Callable[[str], Any]:
    def parse(line: str) -> Any:
        return csv_row(line, columns, sep, quote)

    return parse
