"""Declarative filters on record values: what a trace selects by, never user code.

A filter is JSON, validated and compiled into a picklable callable (it may run inside Spark tasks
that read input lines, so it lives with the task code and travels by value):

    {"field": 0, "op": "equals", "value": "error"}              # record[0] == "error"
    {"op": "contains", "value": "user=Guest"}                    # the whole record (a line)
    {"and": [{"field": "country", "op": "in", "value": ["FR", "DE"]},
             {"field": [1, 0], "op": "range", "value": {"min": 10, "max": 99}}]}
    {"or": [...]}   {"not": {...}}

``field``: omitted or null is the whole record; an int is a position (tuples, lists, Rows); a
string a name (dict keys, Row fields); a list is a path of those. A record without the field
does not match. Operators:

| op | value | matches when the field |
|---|---|---|
| equals | any JSON value | equals it (lists compare with tuples) |
| in | a list | equals one of them |
| contains | a string, or any value | holds it as a substring (strings) or an element (lists, tuples, sets) |
| prefix | a string | is a string starting with it |
| regex | a Python regular expression | is a string in which it matches (``re.search``) |
| range | {"min": n, "max": n}, either optional | is a number (or a numeric string) within both, inclusive |
"""

from __future__ import annotations

import re
from typing import Any

OPERATORS = ("equals", "in", "contains", "prefix", "regex", "range")
MAX_DEPTH = 10
MAX_CONDITIONS = 100
MAX_IN = 10_000
MAX_PATTERN = 500
_MISSING = object()


class PredicateError(ValueError):
    """A filter that is not valid JSON filter syntax; the message names where and what is wrong."""


class Filter:
    """A compiled filter: call it on a record value."""

    def __call__(self, record: Any) -> bool:
        raise NotImplementedError


class _All(Filter):
    def __init__(self, parts: list[Filter]) -> None:
        self.parts = parts

    def __call__(self, record: Any) -> bool:
        return all(p(record) for p in self.parts)


class _Any(Filter):
    def __init__(self, parts: list[Filter]) -> None:
        self.parts = parts

    def __call__(self, record: Any) -> bool:
        return any(p(record) for p in self.parts)


class _Not(Filter):
    def __init__(self, part: Filter) -> None:
        self.part = part

    def __call__(self, record: Any) -> bool:
        return not self.part(record)


class _Condition(Filter):
    def __init__(self, path: tuple[int | str, ...], op: str, value: Any) -> None:
        self.path = path
        self.op = op
        self.value = value
        if op == "regex":
            self.pattern = re.compile(value)
        if op == "in":
            self.options = [_frozen(v) for v in value]

    def __call__(self, record: Any) -> bool:
        found = _lookup(record, self.path)
        if found is _MISSING:
            return False
        return bool(getattr(self, f"_{self.op}")(found))

    def _equals(self, found: Any) -> bool:
        return _frozen(found) == _frozen(self.value)

    def _in(self, found: Any) -> bool:
        frozen = _frozen(found)
        return any(frozen == option for option in self.options)

    def _contains(self, found: Any) -> bool:
        if isinstance(found, str):
            return isinstance(self.value, str) and self.value in found
        if isinstance(found, (list, tuple, set, frozenset)):
            wanted = _frozen(self.value)
            return any(_frozen(item) == wanted for item in found)
        return False

    def _prefix(self, found: Any) -> bool:
        return isinstance(found, str) and found.startswith(self.value)

    def _regex(self, found: Any) -> bool:
        return isinstance(found, str) and self.pattern.search(found) is not None

    def _range(self, found: Any) -> bool:
        number = _number(found)
        if number is None:
            return False
        low, high = self.value.get("min"), self.value.get("max")
        return (low is None or number >= low) and (high is None or number <= high)


def _frozen(value: Any) -> Any:
    """Lists and tuples alike (JSON has no tuples), recursively."""
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _lookup(record: Any, path: tuple[int | str, ...]) -> Any:
    current = record
    for step in path:
        try:
            if isinstance(step, int):
                if isinstance(current, (str, bytes, dict)):
                    return _MISSING
                current = current[step]
            elif isinstance(current, dict):
                current = current[step]
            elif hasattr(current, "asDict") and hasattr(current, "__fields__"):  # pyspark Row
                current = current[step]
            else:
                return _MISSING
        except (IndexError, KeyError, TypeError, ValueError):
            return _MISSING
    return current


def compile_filter(spec: Any) -> Filter:
    """The filter ``spec`` (parsed JSON) describes, compiled.

    Raises:
        PredicateError: ``spec`` is not a valid filter; the message names the part that is wrong.
    """
    counter = [0]
    return _compile(spec, "predicate", 0, counter)


def _compile(spec: Any, where: str, depth: int, counter: list[int]) -> Filter:
    if depth > MAX_DEPTH:
        raise PredicateError(f"{where}: filters nest at most {MAX_DEPTH} deep")
    if not isinstance(spec, dict):
        raise PredicateError(f"{where}: expected an object such as {{\"op\": \"equals\", \"value\": ...}}, "
                             f"got {type(spec).__name__}")
    for combinator in ("and", "or"):
        if combinator in spec:
            _only(spec, {combinator}, where)
            parts = spec[combinator]
            if not isinstance(parts, list) or not parts:
                raise PredicateError(f"{where}.{combinator}: expected a non-empty list of filters")
            compiled = [_compile(p, f"{where}.{combinator}[{i}]", depth + 1, counter) for i, p in enumerate(parts)]
            return _All(compiled) if combinator == "and" else _Any(compiled)
    if "not" in spec:
        _only(spec, {"not"}, where)
        return _Not(_compile(spec["not"], f"{where}.not", depth + 1, counter))
    counter[0] += 1
    if counter[0] > MAX_CONDITIONS:
        raise PredicateError(f"{where}: a filter holds at most {MAX_CONDITIONS} conditions")
    _only(spec, {"field", "op", "value"}, where)
    op = spec.get("op")
    if op not in OPERATORS:
        raise PredicateError(f"{where}.op: {op!r} is not an operator; use one of {', '.join(OPERATORS)} "
                             "(or combine filters with and / or / not)")
    if "value" not in spec:
        raise PredicateError(f"{where}.value: missing (what the field is compared with)")
    value = spec["value"]
    _check_value(op, value, f"{where}.value")
    return _Condition(_path(spec.get("field"), f"{where}.field"), op, value)


def _only(spec: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise PredicateError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                             f"expected {', '.join(sorted(allowed))}")


def _path(field: Any, where: str) -> tuple[int | str, ...]:
    if field is None:
        return ()
    steps = field if isinstance(field, list) else [field]
    if not steps or len(steps) > MAX_DEPTH:
        raise PredicateError(f"{where}: a path of 1 to {MAX_DEPTH} positions or names")
    for step in steps:
        if isinstance(step, bool) or not isinstance(step, (int, str)):
            raise PredicateError(f"{where}: {step!r} is neither a position (an integer) nor a name (a string)")
    return tuple(steps)


def _check_value(op: str, value: Any, where: str) -> None:
    if op in ("prefix", "regex") and not isinstance(value, str):
        raise PredicateError(f"{where}: {op} compares with a string, got {type(value).__name__}")
    if op == "regex":
        if len(value) > MAX_PATTERN:
            raise PredicateError(f"{where}: a pattern of at most {MAX_PATTERN} characters")
        try:
            re.compile(value)
        except re.error as exc:
            raise PredicateError(f"{where}: not a valid regular expression: {exc}") from None
    if op == "in" and (not isinstance(value, list) or len(value) > MAX_IN):
        raise PredicateError(f"{where}: in takes a list of at most {MAX_IN} values")
    if op == "range":
        if not isinstance(value, dict) or not value or set(value) - {"min", "max"}:
            raise PredicateError(f"{where}: range takes {{\"min\": n, \"max\": n}} (either may be left out)")
        for bound in value.values():
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise PredicateError(f"{where}: range bounds are numbers, got {bound!r}")
