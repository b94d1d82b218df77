"""Independent oracles: what lineage must be, computed from the data alone, in plain Python."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any


def lines_with_offsets(path: str) -> list[tuple[int, str]]:
    """(byte offset, line) of every line of a text file, by reading its bytes."""
    out = []
    offset = 0
    with open(path, "rb") as f:
        for raw in f:
            out.append((offset, raw.rstrip(b"\n").decode("utf-8")))
            offset += len(raw)
    return out


def positions_of(path: str, predicate: Any) -> set[tuple[str, int]]:
    """{(file, offset)} of the lines of ``path`` that satisfy ``predicate``."""
    name = os.path.abspath(path)
    return {(name, off) for off, line in lines_with_offsets(path) if predicate(line)}


def local_positions(positions: Iterable[Any]) -> list[tuple[str, int]]:
    """LineageRDD positions as [(local absolute path, offset)], in order."""
    out = []
    for source, offset in positions:
        if source.startswith("file:"):
            source = source[len("file:"):]
            while source.startswith("//"):
                source = source[1:]
        out.append((os.path.abspath(source), offset))
    return out


def as_local(positions: Iterable[Any]) -> set[tuple[str, int]]:
    """LineageRDD positions as {(local absolute path, offset)}."""
    return set(local_positions(positions))


def trace_back(lin: Any) -> set[tuple[str, int]]:
    """Input positions of a LineageRDD's goBackAll()."""
    return as_local(lin.goBackAll().positions())
