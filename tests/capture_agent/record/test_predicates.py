"""Declarative filters: what each operator matches, and a clear error for every malformed filter."""

from __future__ import annotations

import pickle

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
        ({"field": 5, "op": "equals", "value": 1}, ("short",), False),  # a missing field never matches
        ({"field": 0, "op": "equals", "value": "a"}, "abc", False),  # strings have no positions here
        ({"field": 1, "op": "contains", "value": 3}, ("k", [1, 2, 3]), True),
        ({"and": [{"op": "contains", "value": "a"}, {"op": "contains", "value": "b"}]}, "ab", True),
        ({"and": [{"op": "contains", "value": "a"}, {"op": "contains", "value": "b"}]}, "a", False),
        ({"or": [{"op": "contains", "value": "a"}, {"op": "contains", "value": "b"}]}, "b", True),
        ({"not": {"op": "contains", "value": "a"}}, "b", True),
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
        ({"op": "regex", "value": "(unclosed"}, "predicate.value: not a valid regular expression"),
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
