"""The workflow's dataset graph and its splits (pure Python: no Spark)."""

from __future__ import annotations

import pytest

from capture_agent.provenance.workflow import DatasetGraph, SplitTree

CHAIN = DatasetGraph.of([], [("A", "B"), ("B", "C")])


def test_a_chain_is_cut_by_depth_into_weakly_connected_halves_then_single_tables():
    tree = SplitTree.build(CHAIN)
    assert tree.as_json() == {"top": ["0", "1"], "splits": {"0": ["A", "B"], "0.0": ["A"], "0.1": ["B"], "1": ["C"]}}
    assert tree.levels() == {"A": ["0", "0.0"], "B": ["0", "0.1"], "C": ["1"]}


def test_given_splits_come_first_and_the_datasets_they_leave_out_form_more():
    tree = SplitTree.build(DatasetGraph.of([], [("A", "B"), ("B", "C"), ("C", "D")]), [["B", "C"]])
    assert [sorted(tree.members[k]) for k in tree.top] == [["B", "C"], ["A"], ["D"]]
    assert tree.levels()["C"] == ["0", "0.1"]


@pytest.mark.parametrize(("splits", "says"), [
    ([["A", "C"]], "not weakly connected"), ([["A"], ["A", "B"]], "two splits")])
def test_bad_splits_are_refused(splits, says):
    with pytest.raises(ValueError, match=says):
        SplitTree.build(CHAIN, splits)


def test_independent_workflows_and_cycles_are_split_too():
    graph = DatasetGraph.of(["alone"], [("A", "B"), ("B", "C"), ("C", "A"), ("D", "E")])
    tree = SplitTree.build(graph)
    tops = sorted(sorted(tree.members[k]) for k in tree.top)
    assert tops == [["A"], ["B", "C"], ["D"], ["E"], ["alone"]]
    assert all(len(graph.pieces(tree.members[k])) == 1 for k in tree.members)  # every split weakly connected
