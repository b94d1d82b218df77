"""The worked examples of the CSProv paper (Efficiently Processing Workflow Provenance Queries on
Spark), as triples: its Table IV (person records) and Tables VII-VIII (one component cut into four
connected sets)."""

from __future__ import annotations

# Table IV: (src, dst, op, ccid as the paper numbers the components).
PERSON_TRIPLES = [
    (1, 13, "R1", 1), (4, 16, "R1", 2), (7, 19, "R1", 3), (2, 14, "R1", 4), (5, 17, "R1", 4),
    (14, 22, "R2", 4), (17, 22, "R2", 4), (8, 20, "R1", 5), (20, 24, "R2", 5), (3, 15, "R1", 6),
    (6, 18, "R1", 6), (15, 23, "R2", 6), (18, 23, "R2", 6), (9, 21, "R1", 7), (21, 25, "R2", 7),
]


def person_table(item: int) -> str:
    """Person1 holds values 1-12, Person2 13-21, AvgAge 22-25 (Tables I-III)."""
    return "Person1" if item <= 12 else "Person2" if item <= 21 else "AvgAge"


# Table VII: the component C, each item's set as the paper cuts it (S1-S4).
COMPONENT_C = [(1, 2), (1, 3), (2, 4), (3, 4), (4, 5), (4, 6), (5, 7), (7, 8), (7, 9), (6, 10), (10, 11), (10, 12)]
PAPER_SETS = {"S1": {1, 2, 3}, "S2": {4, 5, 6}, "S3": {7, 8, 9}, "S4": {10, 11, 12}}
PAPER_SET_DEPS = {("S1", "S2"), ("S2", "S3"), ("S2", "S4")}  # Table VIII


def c_table(item: int) -> str:
    """The tables the items of C lie in: the workflow A -> B -> C, one split each."""
    return "A" if item <= 3 else "B" if item <= 6 else "C"
