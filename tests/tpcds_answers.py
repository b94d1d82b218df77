"""Two answers of one query compared as multisets of rows, numbers (int, float, Decimal) to a tolerance.

Rows are sequences (a Spark ``Row``, a DuckDB tuple); their order is not compared (a query's ORDER BY
may leave ties, and two engines or two runs break them differently). Values other than numbers,
``None`` among them, must be equal; a number matches a number within ``rel_tol`` or ``abs_tol``,
whatever their types (Spark's decimal average against DuckDB's double, say).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

_NUMBER = (int, float, Decimal)


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def _exact_part(row: Sequence[Any]) -> tuple[Any, ...]:
    """The row with each number replaced by a marker: rows that may match have the same exact part."""
    return tuple("<number>" if _is_number(v) else v for v in row)


def _numbers(row: Sequence[Any]) -> tuple[float, ...]:
    return tuple(float(v) for v in row if _is_number(v))


def _close(a: tuple[float, ...], b: tuple[float, ...], rel_tol: float, abs_tol: float) -> bool:
    return all(x == y or math.isclose(x, y, rel_tol=rel_tol, abs_tol=abs_tol) for x, y in zip(a, b, strict=True))


def _unmatched(
    left: list[tuple[float, ...]], right: list[tuple[float, ...]], rel_tol: float, abs_tol: float
) -> tuple[float, ...] | None:
    """A row of ``left`` that no row of ``right`` matches (both of one length and one exact part)."""
    left, right = sorted(left), sorted(right)
    if all(_close(a, b, rel_tol, abs_tol) for a, b in zip(left, right, strict=True)):
        return None
    remaining = list(right)  # sorted pairs disagree near a tolerance's edge: match greedily instead
    for a in left:
        for i, b in enumerate(remaining):
            if _close(a, b, rel_tol, abs_tol):
                del remaining[i]
                break
        else:
            return a
    return None


def diff_rows(
    expected: Iterable[Sequence[Any]],
    actual: Iterable[Sequence[Any]],
    rel_tol: float = 1e-9,
    abs_tol: float = 1e-9,
) -> str | None:
    """None when the two answers hold the same rows; else a line saying how they differ."""
    want, got = [tuple(r) for r in expected], [tuple(r) for r in actual]
    if len(want) != len(got):
        return f"{len(want)} rows expected, {len(got)} returned"
    if len({len(r) for r in want + got}) > 1:
        return "the rows' widths differ"
    groups: dict[tuple[Any, ...], tuple[list[tuple[float, ...]], list[tuple[float, ...]]]] = defaultdict(
        lambda: ([], [])
    )
    try:
        for row in want:
            groups[_exact_part(row)][0].append(_numbers(row))
        for row in got:
            groups[_exact_part(row)][1].append(_numbers(row))
    except TypeError:  # an unhashable value (a list, a map): compare those rows exactly, in order
        return None if sorted(map(repr, want)) == sorted(map(repr, got)) else "the rows differ"
    for exact, (left, right) in groups.items():
        if len(left) != len(right):
            which = "expected" if len(left) > len(right) else "returned"
            return f"a row {exact} is {which} {abs(len(left) - len(right))} more time(s) than the other side has it"
        missing = _unmatched(left, right, rel_tol, abs_tol)
        if missing is not None:
            return f"no returned row matches the expected {exact} with numbers {missing}"
    return None


def same_rows(
    expected: Iterable[Sequence[Any]], actual: Iterable[Sequence[Any]], rel_tol: float = 1e-9, abs_tol: float = 1e-9
) -> bool:
    """Whether the two answers hold the same rows (as multisets, numbers to the tolerance)."""
    return diff_rows(expected, actual, rel_tol, abs_tol) is None
