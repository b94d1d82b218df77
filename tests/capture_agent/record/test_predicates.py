"""Declarative filters: what each operator matches, and a clear error for every malformed filter."""

from __future__ import annotations

import datetime
import decimal
import pickle
import time

import pytest
from pyspark.sql import Row

from capture_agent.record.worker.predicates import PredicateError, compile_filter


@pytest.mark.parametrize(
    ("spec", "record", "expected"),
    [
        ({"op": "contains", "value": "Guest"}, "user=Guest id=4", True),
        ({"op": "contains", "value": "Guest"}, "user=Admin", False),
        ({"field": 0, "op": "equals", "value": "error"}, ("error", 3), True),
        ({"field": 0, "op": "equals", "value": "error"}, ("warning", 3), False),
        ({"field": 1, "op": "equals", "value": [1, 2]}, ("k", (1, 2)), True),
        ({"field": [1, 0], "op": "range", "value": {"min": 10, "max": 99}}, ("k", (42, "x")), True),
        ({"field": [1, 0], "op": "range", "value": {"min": 10}}, ("k", (9, "x")), False),
        ({"field": 1, "op": "range", "value": {"max": 5}}, ("k", "4.5"), True),
        ({"field": 1, "op": "range", "value": {"max": 5}}, ("k", True), False),
        ({"field": "country", "op": "in", "value": ["FR", "DE"]}, {"country": "DE"}, True),
        ({"field": "country", "op": "in", "value": ["FR", "DE"]}, Row(country="IT"), False),
        ({"field": "country", "op": "prefix", "value": "F"}, Row(country="FR"), True),
        ({"op": "regex", "value": r"^\d+ err"}, "42 error", True),
        ({"op": "regex", "value": r"^\d+ err"}, "x42 error", False),
        ({"op": "regex", "value": "(?i)ERR"}, "an error", True),
        ({"field": 1, "op": "in", "value": [[1, 2], "x", {"a": 1}]}, ("k", (1, 2)), True),
        ({"field": 1, "op": "in", "value": [[1, 2], "x", {"a": 1}]}, ("k", {"a": 1}), True),
        ({"field": 1, "op": "in", "value": [[1, 2], "x", {"a": 1}]}, ("k", [1, 3]), False),
        ({"field": 5, "op": "equals", "value": 1}, ("short",), False),  # a missing field never matches
        ({"field": 0, "op": "equals", "value": "a"}, "abc", False),  # strings have no positions here
        ({"field": 1, "op": "contains", "value": 3}, ("k", [1, 2, 3]), True),
        ({"and": [{"op": "contains", "value": "a"}, {"op": "contains", "value": "b"}]}, "ab", True),
        ({"and": [{"op": "contains", "value": "a"}, {"op": "contains", "value": "b"}]}, "a", False),
        ({"or": [{"op": "contains", "value": "a"}, {"op": "contains", "value": "b"}]}, "b", True),
        ({"not": {"op": "contains", "value": "a"}}, "b", True),
        # a form sends text: it equals a typed column's value written so (DataFrame sources)
        ({"field": "id", "op": "equals", "value": "5"}, Row(id=5), True),
        ({"field": "id", "op": "equals", "value": "5"}, Row(id=50), False),
        ({"field": "id", "op": "equals", "value": 5}, Row(id="5"), True),
        ({"field": "x", "op": "equals", "value": "2.5"}, Row(x=2.5), True),
        ({"field": "x", "op": "equals", "value": "2"}, Row(x=2.0), True),
        ({"field": "ok", "op": "equals", "value": "true"}, Row(ok=True), True),
        ({"field": "ok", "op": "equals", "value": "1"}, Row(ok=True), False),
        ({"field": "day", "op": "equals", "value": "2024-01-05"}, Row(day=datetime.date(2024, 1, 5)), True),
        ({"field": "at", "op": "equals", "value": "2024-01-05 10:00:00"},
         Row(at=datetime.datetime(2024, 1, 5, 10)), True),
        ({"field": "p", "op": "equals", "value": "1.50"}, Row(p=decimal.Decimal("1.50")), True),
        ({"field": "id", "op": "in", "value": ["4", "5"]}, Row(id=5), True),
        ({"field": "id", "op": "in", "value": [4, 5]}, Row(id="5"), True),
        ({"field": "id", "op": "in", "value": ["4", "6"]}, Row(id=5), False),
    ],
)
def test_a_filter_matches_what_its_operator_says(spec, record, expected):
    compiled = compile_filter(spec)
    assert compiled(record) is expected
    assert pickle.loads(pickle.dumps(compiled))(record) is expected  # it travels to Spark tasks


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("error", "predicate: expected an object"),
        ({"op": "like", "value": "a"}, "predicate.op: 'like' is not an operator"),
        ({"op": "equals"}, "predicate.value: missing"),
        ({"op": "equals", "value": 1, "colour": "red"}, "unknown key(s) 'colour'"),
        ({"and": []}, "predicate.and: expected a non-empty list"),
        ({"and": [{"op": "equals", "value": 1}, {"op": "prefix", "value": 3}]}, "predicate.and[1].value: prefix"),
        ({"op": "regex", "value": "(unclosed"}, "predicate.value: not a regular expression RE2 can run"),
        ({"op": "regex", "value": r"(a)\1"}, "predicate.value: not a regular expression RE2 can run"),
        ({"op": "regex", "value": r"foo(?=bar)"}, "backreferences and lookaround are not supported"),
        ({"op": "regex", "value": "(a{1000}){1000}"}, "predicate.value: not a regular expression RE2 can run"),
        ({"op": "regex", "value": "a" * 501}, "a pattern of at most 500 characters"),
        ({"op": 7, "value": 1}, "predicate.op: 7 is not an operator"),
        ({"op": "range", "value": {"min": "a"}}, "range bounds are numbers"),
        ({"op": "range", "value": {"low": 1}}, "range takes"),
        ({"op": "in", "value": "abc"}, "in takes a list"),
        ({"field": 1.5, "op": "equals", "value": 1}, "predicate.field: 1.5 is neither a position"),
        ({"not": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {"not": {}}}}}}}}}}}},
         "nest at most"),
    ],
)
def test_a_malformed_filter_is_refused_naming_what_is_wrong(spec, message):
    with pytest.raises(PredicateError) as err:
        compile_filter(spec)
    assert message in str(err.value)


# Python's re needs about 2**n steps for these on a line of n word characters followed by a space
# (the catastrophic pattern, and the classic nested quantifier).
CATASTROPHIC = [(r"^(\w+\s?)*$x", "a"), (r"^(a+)+$", "a"), (r"(x+x+)+y", "x")]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("pattern", "letter"), CATASTROPHIC)
def test_a_catastrophic_pattern_runs_in_time_linear_in_the_record(pattern, letter):
    """RE2 has no backtracking: 2,000 records of 10,000 characters each take well under the
    minutes Python's re takes on one record of 30 characters."""
    compiled = compile_filter({"op": "regex", "value": pattern})
    started = time.perf_counter()
    record = letter * 10_000 + "!"
    assert not any(compiled(record + str(i)) for i in range(2_000))
    took = time.perf_counter() - started
    assert took < 30, f"{took:.1f} s for 20 MB of text"


@pytest.mark.timeout(60)
def test_each_operator_is_checked_on_a_long_record_in_linear_time():
    """Every operator, fed a record a thousand times larger, takes at most about a thousand times
    longer (generous: the machine is shared), never quadratically longer."""
    specs = [
        {"op": "equals", "value": "x" * 500},
        {"op": "in", "value": [str(i) for i in range(10_000)]},
        {"op": "contains", "value": "ab" * 200 + "c"},
        {"op": "prefix", "value": "a" * 200 + "b"},
        {"op": "regex", "value": CATASTROPHIC[0][0]},
        {"op": "range", "value": {"min": 0}},
    ]
    for spec in specs:
        compiled = compile_filter(spec)
        small, large = "ab" * 500, "ab" * 500_000
        assert _seconds(compiled, large, 10) < 50 * max(_seconds(compiled, small, 10_000), 1e-3) + 5, spec


def _seconds(compiled, record, times):
    started = time.perf_counter()
    for _ in range(times):
        compiled(record)
    return time.perf_counter() - started
