"""Records compared as multisets, the way a what-if's replay matches old and new outputs: equal
records by a hashable stand-in (``canonical``), groups by their members in any order."""

from __future__ import annotations

from typing import Any


def canonical(value: Any) -> Any:
    """A hashable stand-in equal for equal records; a group (groupByKey's iterable) by its members,
    in any order."""
    if type(value).__name__ == "ResultIterable":
        return ("group", tuple(sorted(repr(canonical(v)) for v in value)))
    if type(value) is tuple:
        return ("tuple", tuple(canonical(v) for v in value))
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return ("value", value)


def cancelled(old: list[Any], new: list[Any]) -> tuple[list[Any], list[Any]]:
    """``old`` and ``new`` less the records they share (as multisets)."""
    pending: dict[Any, list[Any]] = {}
    for record in new:
        pending.setdefault(canonical(record), []).append(record)
    gone = []
    for record in old:
        same = pending.get(canonical(record))
        if same:
            same.pop()
        else:
            gone.append(record)
    return gone, [r for records in pending.values() for r in records]


def patched(kept: list[Any], removed: list[Any], added: list[Any]) -> list[Any] | None:
    """``kept`` less ``removed`` plus ``added`` (``kept``'s order, then ``added``'s); None when a
    removed record is not in ``kept`` (as often as it is removed)."""
    leaving: dict[Any, int] = {}
    for record in removed:
        leaving[canonical(record)] = leaving.get(canonical(record), 0) + 1
    left = []
    for record in kept:
        found = canonical(record)
        if leaving.get(found):
            leaving[found] -= 1
        else:
            left.append(record)
    if any(leaving.values()):
        return None
    return left + added
