"""The comparison of two answers (tests/tpcds_answers.py): multisets of rows, numbers to a tolerance."""

from __future__ import annotations

import datetime
from decimal import Decimal

from tests.tpcds_answers import diff_rows, same_rows


def test_the_order_of_rows_does_not_count_but_how_many_times_each_comes_does():
    assert same_rows([("a", 1), ("b", 2), ("a", 1)], [("a", 1), ("a", 1), ("b", 2)])
    assert not same_rows([("a", 1), ("b", 2), ("a", 1)], [("a", 1), ("b", 2), ("b", 2)])
    assert diff_rows([("a", 1)], [("a", 1), ("a", 1)]) == "1 rows expected, 2 returned"
    assert same_rows([], [])


def test_numbers_of_any_type_match_within_the_tolerance():
    assert same_rows([("x", Decimal("1.333333"), 2)], [("x", 4 / 3, 2.0)], rel_tol=1e-6, abs_tol=1e-6)
    assert not same_rows([("x", Decimal("1.333333"))], [("x", 4 / 3)])  # the default tolerance is 1e-9
    assert same_rows([(0.1 + 0.2,)], [(0.3,)])
    assert not same_rows([(1.0,)], [(1.001,)])
    assert "no returned row matches" in (diff_rows([("x", 1.0)], [("x", 1.5)]) or "")


def test_values_other_than_numbers_are_equal_or_the_rows_differ():
    day = datetime.date(2000, 1, 2)
    assert same_rows([(day, None, "s")], [(day, None, "s")])
    assert not same_rows([(day, None, "s")], [(day, 0, "s")])  # None is no number, not zero
    assert not same_rows([(day, "s")], [(day, "s ")])
    assert not same_rows([(True,)], [(1,)])  # a boolean is no number
    assert diff_rows([("a", 1)], [("a", 1, 2)]) == "the rows' widths differ"


def test_rows_near_the_tolerance_edge_are_matched_whatever_their_sorted_order():
    # Sorted, the first columns put (1.0, 5.0) against (1.0 + 1e-10, 1.0): the rows still match, each
    # with the other side's row of the same second column, which a greedy matching finds.
    expected = [(1.0, 5.0), (1.0 + 5e-10, 1.0)]
    actual = [(1.0 + 6e-10, 5.0), (1.0 + 1e-10, 1.0)]
    assert same_rows(expected, actual)
    assert not same_rows(expected, [(1.0, 1.0), (1.0, 1.0)])


def test_unhashable_values_are_compared_exactly():
    assert same_rows([([1, 2], "a")], [([1, 2], "a")])
    assert not same_rows([([1, 2], "a")], [([2, 1], "a")])
