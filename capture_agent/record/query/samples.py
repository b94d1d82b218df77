"""Sample records of a capture point, as text, where their values were kept: what the browser's
node panel shows without running a trace.

Read without Spark and without running or unpickling anything the job wrote, so the web process
may call it (the trust model in docs/security.md: only Spark tasks run stored code):
- text and CSV inputs: the first lines of the first splits, read from the input files at the byte
  offsets kept at capture (after checking the files did not change);
- ``parallelize`` inputs and action results: the ``text`` column kept beside the pickled values
  (``repr`` of each value, cut at 200 characters);
- Parquet inputs: the first rows, read with pyarrow and shown as ``Row(...)``;
- DataFrame sources (``file_rows``, ``file_lines``): the first rows as the frame read them, typed
  by its schema (``storage.spark_rows``): Parquet and ORC rows by pyarrow, CSV and JSON lines
  parsed from the first MiB of the first files (a text source's lines as they are).
Any other point keeps ids only: its sample says so, and a trace computes its records' values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice

from pyroaring import BitMap64

from capture_agent.record.errors import LineageError
from capture_agent.record.storage.ids import SHIFT
from capture_agent.record.storage.layouts.inputs import FileLines, FileRows, Rows, Text, Values, check_files
from capture_agent.record.storage.manifest import CapturePoint, LineageStore
from capture_agent.record.storage.sources import open_source, read_lines, split_hadoop_lines
from capture_agent.record.storage.tables import num_rows, read_rows
from capture_agent.record.worker.inputs import short_repr

MAX_SAMPLE = 50


@dataclass
class Sample:
    """Up to ``limit`` records of one point as (record id, text); ``kept`` False with a ``note``
    when the point keeps no values (or they cannot be read now)."""

    kept: bool
    records: list[tuple[int, str]] = field(default_factory=list)
    note: str = ""


def sample(run: LineageStore, capture_id: str, limit: int = 10) -> Sample:
    """The first ``limit`` (at most ``MAX_SAMPLE``) records of a point, in id order."""
    point = run.point(capture_id)
    limit = max(0, min(limit, MAX_SAMPLE))
    layout = point.layout
    try:
        if isinstance(layout, Text):
            return Sample(True, _text_lines(run, point, limit))
        if isinstance(layout, Values):
            return Sample(True, _text_column(run, range(point.num_partitions), point.table_path, limit))
        if isinstance(layout, Rows):
            return Sample(True, _parquet_rows(run, point, limit))
        if isinstance(layout, FileRows):
            first = BitMap64(islice(layout.all_ids(run.fs, point), limit))
            return Sample(True, [(i, short_repr(row)) for i, row in layout.rows(first)])
        if isinstance(layout, FileLines):
            return Sample(True, _frame_lines(layout, limit))
        if point.kind == "output" and point.values_file:
            path = f"{point.location}/{point.values_file}"
            return Sample(True, _text_column(run, [0], lambda _: path, limit))
    except (LineageError, OSError) as exc:
        return Sample(False, note=f"the values kept at {capture_id} cannot be read now: {exc}")
    if point.kind == "output":
        note = "this action's results were not kept (more than the bound, or not brought to the driver)"
    else:
        note = f"only record ids are kept at this {point.kind} point"
    return Sample(False, note=note + "; a trace through it computes its records' values")


def _cut(line: str) -> str:
    return line if len(line) <= 200 else line[:197] + "..."


def _first_ids(run: LineageStore, point: CapturePoint, limit: int) -> BitMap64:
    """The first ``limit`` ids of a point whose row i of partition p is record (p, i), reading the
    footers of its first tables only (a run may have thousands)."""
    ids = BitMap64()
    for part in range(point.num_partitions):
        if len(ids) >= limit:
            break
        for path in (point.table_path(part), point.partial_path(part)):
            if run.fs.exists(path):
                start = part << SHIFT
                ids.add_range(start, start + min(num_rows(run.fs, path), limit - len(ids)))
                break
    return ids


def _text_lines(run: LineageStore, point: CapturePoint, limit: int) -> list[tuple[int, str]]:
    layout = point.layout
    assert isinstance(layout, Text)
    out: list[tuple[int, str]] = []
    for uri, record_ids, offsets, _parse, _predicate in layout.text_units(
            run.fs, point, _first_ids(run, point, limit), None):
        out.extend(zip(record_ids, (_cut(line) for line in read_lines(uri, offsets)), strict=True))
    return out


def _text_column(run: LineageStore, parts: Iterable[int], path_of: Callable[[int], str],
                 limit: int) -> list[tuple[int, str]]:
    """The (id, text) rows of tables with ``out_id`` and ``text`` columns, partition by partition."""
    out: list[tuple[int, str]] = []
    for part in parts:
        if len(out) >= limit:
            break
        path = path_of(part)
        if not run.fs.exists(path):
            continue
        table = read_rows(run.fs, path, ["out_id", "text"]).slice(0, limit - len(out))
        out.extend(zip(table.column("out_id").to_pylist(), table.column("text").to_pylist(), strict=True))
    return out


def _parquet_rows(run: LineageStore, point: CapturePoint, limit: int) -> list[tuple[int, str]]:
    layout = point.layout
    assert isinstance(layout, Rows)
    ids = BitMap64(islice(layout.all_ids(run.fs, point), limit))  # its tables hold segments, not rows
    return [(record_id, short_repr(row)) for record_id, row in layout.rows(run.fs, point, ids)]


SAMPLE_BYTES = 1 << 20  # of each file a sample of a DataFrame's lines reads at most


def _frame_lines(layout: FileLines, limit: int) -> list[tuple[int, str]]:
    """The first ``limit`` lines Spark's reader made rows of (no blank lines but in text, no header),
    from the first MiB of the first files, as their records (the frame's rows, or text lines)."""
    parse = layout.parser()
    out: list[tuple[int, str]] = []
    for index, info in enumerate(layout.files):
        if len(out) >= limit:
            break
        check_files(layout.files, {index})
        with open_source(info["path"]) as f:
            head = f.read(SAMPLE_BYTES)
        lines = split_hadoop_lines(0, head)
        if len(head) == SAMPLE_BYTES and b"\n" in head:
            lines = lines[:-1]  # the last may be cut
        if layout.format != "text":
            lines = [(o, raw) for o, raw in lines if raw.strip(b" \t\r\n\x0b\x0c\x00")]
        for offset, raw in lines[1 if layout.header else 0:][: limit - len(out)]:
            line = raw.decode("utf-8", "replace")
            out.append(((index << SHIFT) | offset, short_repr(parse(line) if parse is not None else line)))
    return out
