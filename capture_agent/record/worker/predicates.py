"""Declarative filters on record values: what a trace selects by, never user code.

A filter is JSON, validated and compiled into a picklable callable (it may run inside Spark tasks
that read input lines, so it lives with the task code and travels by value):

    {"field": 0, "op": "equals", "value": "error"}              # record[0] == "error"
    {"op": "contains", "value": "user=Guest"}                    # the whole record (a line)
    {"and": [{"field": "country", "op": "in", "value": ["FR", "DE"]},
             {"field": [1, 0], "op": "range", "value": {"min": 10, "max": 99}}]}
    {"or": [...]}   {"not": {...}}

A string and a number, boolean, date, time or decimal compare by the value's text ("5" equals 5,
"2024-01-05" a date): a form sends text, and a DataFrame source's columns are typed.

``field``: omitted or null is the whole record; an int is a position (tuples, lists, Rows); a
string a name (dict keys, Row fields); a list is a path of those. A record without the field
does not match. Operators:

| op | value | matches when the field |
|---|---|---|
| equals | any JSON value | equals it (lists compare with tuples; text and a typed value by its text) |
| in | a list | equals one of them (as equals) |
| contains | a string, or any value | holds it as a substring (strings) or an element (lists, tuples, sets) |
| prefix | a string | is a string starting with it |
| regex | an RE2 regular expression | is a string in which it matches (``search``) |
| range | {"min": n, "max": n}, either optional | is a number (or a numeric string) within both, inclusive |

Every test takes time linear in the record's size, so no filter can make a trace run away:
patterns run on RE2, which has no backtracking (Python's ``re`` takes exponential time on
``^(\\w+\\s?)*$x``). RE2's syntax is Python's less backreferences and lookaround (refused
with a message when the filter is compiled), and its ``\\w``, ``\\d``, ``\\b`` are ASCII.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import re2

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


class Condition(Filter):
    """One operator's test of one field: a subclass per operator (``OPERATORS`` maps names to them).

    Each test takes time linear in the field's size: a value that could make one record cost more
    (a pattern with backtracking) is refused when the filter is compiled.
    """

    op = ""

    def __init__(self, path: tuple[int | str, ...], value: Any) -> None:
        self.path = path
        self.value = value
        self.wanted = _frozen(value)  # JSON has no tuples: lists and tuples compare alike

    @classmethod
    def check(cls, value: Any, where: str) -> None:
        """Raises PredicateError when ``value`` is not what this operator compares with."""

    def __call__(self, record: Any) -> bool:
        found = _lookup(record, self.path)
        return found is not _MISSING and self.matches(found)

    def matches(self, found: Any) -> bool:
        raise NotImplementedError


class Equals(Condition):
    """Equal values, or a string and a scalar of another type whose text it is (a form sends "5"
    for a DataFrame source's integer column, typed by its schema)."""

    op = "equals"

    def matches(self, found: Any) -> bool:
        return bool(_frozen(found) == self.wanted) or _same_text(found, self.wanted)


class In(Condition):
    """Hashable options in a set (one lookup per record, however long the list); others compared in turn."""

    op = "in"

    def __init__(self, path: tuple[int | str, ...], value: Any) -> None:
        super().__init__(path, value)
        options = [_frozen(v) for v in value]
        self.hashed = frozenset(o for o in options if _hashable(o))
        self.others = [o for o in options if not _hashable(o)]
        # How the options that are not strings are written: a string record is looked up there once.
        self.written = frozenset().union(*(_texts(o) for o in self.hashed if not isinstance(o, str)))

    @classmethod
    def check(cls, value: Any, where: str) -> None:
        if not isinstance(value, list) or len(value) > MAX_IN:
            raise PredicateError(f"{where}: in takes a list of at most {MAX_IN} values")

    def matches(self, found: Any) -> bool:
        frozen = _frozen(found)
        if _hashable(frozen) and frozen in self.hashed:
            return True
        if isinstance(found, str):
            return found.strip() in self.written
        texts = _texts(found)
        return bool(texts & self.hashed) or any(frozen == option for option in self.others)


class Contains(Condition):
    op = "contains"

    def matches(self, found: Any) -> bool:
        if isinstance(found, str):
            return isinstance(self.value, str) and self.value in found
        if isinstance(found, (list, tuple, set, frozenset)):
            return any(_frozen(item) == self.wanted for item in found)
        return False


class Prefix(Condition):
    op = "prefix"

    @classmethod
    def check(cls, value: Any, where: str) -> None:
        _string(cls.op, value, where)

    def matches(self, found: Any) -> bool:
        return isinstance(found, str) and found.startswith(self.value)


class Regex(Condition):
    """RE2 (``google-re2``): matching takes time linear in the text, whatever the pattern; a pattern
    RE2 cannot run so (backreferences, lookaround) or that would need too much memory is refused."""

    op = "regex"

    def __init__(self, path: tuple[int | str, ...], value: Any) -> None:
        super().__init__(path, value)
        self.pattern = _re2(value)

    @classmethod
    def check(cls, value: Any, where: str) -> None:
        _string(cls.op, value, where)
        if len(value) > MAX_PATTERN:
            raise PredicateError(f"{where}: a pattern of at most {MAX_PATTERN} characters")
        try:
            _re2(value)
        except re2.error as exc:
            reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else exc
            raise PredicateError(f"{where}: not a regular expression RE2 can run in linear time ({reason}); "
                                 "backreferences and lookaround are not supported") from None

    def matches(self, found: Any) -> bool:
        return isinstance(found, str) and self.pattern.search(found) is not None


class Range(Condition):
    op = "range"

    @classmethod
    def check(cls, value: Any, where: str) -> None:
        if not isinstance(value, dict) or not value or set(value) - {"min", "max"}:
            raise PredicateError(f"{where}: range takes {{\"min\": n, \"max\": n}} (either may be left out)")
        for bound in value.values():
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise PredicateError(f"{where}: range bounds are numbers, got {bound!r}")

    def matches(self, found: Any) -> bool:
        number = _number(found)
        if number is None:
            return False
        low, high = self.value.get("min"), self.value.get("max")
        return (low is None or number >= low) and (high is None or number <= high)


OPERATORS: dict[str, type[Condition]] = {c.op: c for c in (Equals, In, Contains, Prefix, Regex, Range)}


def _re2(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False  # the error is raised (and reported to the user), not printed by RE2
    return re2.compile(pattern, options)


def _string(op: str, value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise PredicateError(f"{where}: {op} compares with a string, got {type(value).__name__}")


def _texts(value: Any) -> frozenset[str]:
    """The ways a scalar that is not a string is written ("5" for 5, "5.0" and "5" for 5.0,
    "true" for True, ISO and ``str`` for a date or time); none for strings and containers."""
    if isinstance(value, bool):
        return frozenset({str(value).lower(), str(value)})
    if isinstance(value, int):
        return frozenset({str(value)})
    if isinstance(value, float):
        return frozenset({repr(value), str(int(value))}) if value.is_integer() else frozenset({repr(value)})
    if isinstance(value, (datetime.date, datetime.time)):
        return frozenset({value.isoformat(), str(value)})
    if isinstance(value, decimal.Decimal):
        return frozenset({str(value), str(value.normalize())})
    return frozenset()


def _same_text(found: Any, wanted: Any) -> bool:
    """A string on one side and a scalar of another type written so on the other."""
    if isinstance(wanted, str) and not isinstance(found, str):
        return wanted.strip() in _texts(found)
    if isinstance(found, str) and not isinstance(wanted, str):
        return found.strip() in _texts(wanted)
    return False


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


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
    condition = OPERATORS.get(op) if isinstance(op, str) else None
    if condition is None:
        raise PredicateError(f"{where}.op: {op!r} is not an operator; use one of {', '.join(OPERATORS)} "
                             "(or combine filters with and / or / not)")
    if "value" not in spec:
        raise PredicateError(f"{where}.value: missing (what the field is compared with)")
    value = spec["value"]
    condition.check(value, f"{where}.value")
    return condition(_path(spec.get("field"), f"{where}.field"), value)


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


def field_names(spec: Any) -> list[str]:
    """The column names a (valid) filter tests: each condition's first step when it is a name."""
    if not isinstance(spec, dict):
        return []
    parts = spec.get("and") or spec.get("or")
    if isinstance(parts, list):
        return [n for part in parts for n in field_names(part)]
    if "not" in spec:
        return field_names(spec["not"])
    first = _path(spec.get("field"), "field")[:1]
    return [first[0]] if first and isinstance(first[0], str) else []


def check_fields(spec: Any, fields: list[str], where: str) -> None:
    """Raises PredicateError naming a column the filter tests that records at ``where`` (whose
    fields are ``fields``) do not have, and listing those they have."""
    for name in field_names(spec):
        if name not in fields:
            raise PredicateError(f"predicate.field: {name!r} is not a column of the records at {where}; "
                                 f"its columns: {', '.join(fields)}")
