"""A diff's rows (JSON lines, ``services.diff_answer`` writes them): every output key with its fate
and values, then the explained output's input records added and removed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice
from typing import Any

from lineage_server.tracing.selectors.results import ResultFile


def diff_rows(result: ResultFile) -> Iterator[dict[str, Any]]:
    """Every row of a diff's result file, in order."""
    for line in result.store.read_bytes(result.path).decode().splitlines():
        yield json.loads(line)


def diff_rows_page(result: ResultFile, start: int, size: int) -> list[dict[str, Any]]:
    """Rows ``start`` to ``start + size`` of a diff's result file."""
    return list(islice(diff_rows(result), start, start + size))
