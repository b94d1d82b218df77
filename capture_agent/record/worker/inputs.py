"""Input agents: the task code that gives input records their ids and writes input tables.

Text lines need no agent of their own (the generated stage function numbers them and keeps their
byte offsets). Shipped to executors by value.
"""

from __future__ import annotations

import pickle
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from capture_agent.record.storage.fs import hadoop_path
from capture_agent.record.storage.layouts.inputs import write_rows, write_text_input, write_values
from capture_agent.record.storage.sources import csv_row
from capture_agent.record.storage.tables import TableTarget

Agent = Callable[[int, Iterable[Any]], Iterator[tuple[int, Any]]]


def short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def dumps(value: Any) -> bytes:
    """Pickles a record value (cloudpickle for lambdas and friends)."""
    try:
        return pickle.dumps(value, protocol=5)
    except Exception:  # noqa: BLE001 - pickle raises many kinds of errors for what it cannot pickle
        from pyspark import cloudpickle

        return bytes(cloudpickle.dumps(value, protocol=5))


def values_input_agent(target: TableTarget) -> Agent:
    """parallelize(): records get (partition, index) ids; the values are kept for traces."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        pickles: list[bytes] = []
        texts: list[str] = []
        i = 0
        for value in iterator:
            pickles.append(dumps(value))
            texts.append(short_repr(value))
            yield i, value
            i += 1
        write_values(target, split, pickles, texts)

    return agent


def parquet_input_agent(target: TableTarget) -> Agent:
    """DataFrame rows with _metadata.file_path/row_index: ids (partition, i), segments kept."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        from pyspark.sql.types import _create_row

        fields = None
        seg_start: list[int] = []
        seg_file: list[str] = []
        seg_row: list[int] = []
        seg_count: list[int] = []
        path = None
        expected = -1
        i = 0
        for row in iterator:
            if fields is None:
                fields = list(row.__fields__[:-2])
            file_path, row_index = row[-2], row[-1]
            if file_path != path or row_index != expected:
                seg_start.append(i)
                seg_file.append(hadoop_path(file_path))
                seg_row.append(row_index)
                seg_count.append(0)
                path = file_path
            seg_count[-1] += 1
            expected = row_index + 1
            yield i, _create_row(fields, row[:-2])
            i += 1
        write_rows(target, split, seg_start, seg_file, seg_row, seg_count)

    return agent


def csv_input_agent(target: TableTarget, bases: list[int], header: bool, columns: list[str], sep: str,
                    quote: str) -> Agent:
    """CSV read as text lines (ids and offsets like textFile) parsed like Spark's reader."""

    def agent(split: int, iterator: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        base = bases[split]
        offsets = array("I")
        for pos, (offset, line) in enumerate(iterator):
            offsets.append(offset - base)
            if header and offset == 0:
                continue
            yield pos, csv_row(line, columns, sep, quote)
        write_text_input(target, split, offsets, True)

    return agent
