"""Deletion propagation: what becomes of a record when some of the records it came from are deleted.

Lipstick's semiring labels (section 4.2 of the Lipstick paper) give the rule of each capture
point; the layout class of a point derives its rule from the point's kind and mode when the
lineage is read (``Layout.deletion``), so a rule fixed here reaches every run, old ones included.

| rule | label | an output is deleted when | changed when | new outputs can appear |
|---|---|---|---|---|
| Token | token | it is itself deleted | - | no |
| Copy | copy | its input is | - | with a limit (take, top) |
| Sum | + | all its inputs are | some are | no |
| Exists | δ | all its inputs are | never (its value is its key) | no |
| Product | · | any side's input is | - | no |
| Outer | ·/+ | every kept side is lost | an optional side loses inputs | yes (a side loses all) |
| Intersection | δ·δ | either side loses all | never | no |
| Difference | − | its left input is | never | yes (right side deleted) |

``fate`` takes, per parent slot, how many of the record's inputs are deleted and how many it has.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass


class Fate(enum.Enum):
    """What a deletion does to one record."""

    UNCHANGED = "unchanged"
    CHANGED = "changed"
    DELETED = "deleted"


@dataclass(frozen=True)
class DeletionRule:
    """Base rule: decides a record's fate from its deleted and total inputs per parent slot."""

    label: str = ""
    appears: bool = False  # deleting inputs can make outputs appear that did not exist

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        raise NotImplementedError


@dataclass(frozen=True)
class Token(DeletionRule):
    """An input record: deleted only when it is itself selected for deletion."""

    label: str = "token"

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        return Fate.DELETED if any(lost) else Fate.UNCHANGED


@dataclass(frozen=True)
class Copy(DeletionRule):
    """One input per output (map chains, repartitioning, union, collect)."""

    label: str = "copy"

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        return Fate.DELETED if any(lost) else Fate.UNCHANGED


@dataclass(frozen=True)
class Sum(DeletionRule):
    """An aggregate whose value depends on its inputs (reduce, group, combine, cogroup)."""

    label: str = "+"

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        gone, had = sum(lost), sum(total)
        if had and gone >= had:
            return Fate.DELETED
        return Fate.CHANGED if gone else Fate.UNCHANGED


@dataclass(frozen=True)
class Exists(DeletionRule):
    """An output that exists while any input does and whose value does not depend on which (distinct)."""

    label: str = "δ"

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        had = sum(total)
        return Fate.DELETED if had and sum(lost) >= had else Fate.UNCHANGED


@dataclass(frozen=True)
class Product(DeletionRule):
    """An inner join or cartesian pair: deleted with either of its inputs."""

    label: str = "·"

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        return Fate.DELETED if any(lost) else Fate.UNCHANGED


@dataclass(frozen=True)
class Outer(DeletionRule):
    """An outer join pair: ``kept`` slots are the sides every output has (left for a left join,
    none for a full join). Losing a kept side deletes the pair; losing an optional side changes it
    (the side becomes None); losing every side it has deletes it."""

    label: str = "·/+"
    appears: bool = True
    kept: tuple[int, ...] = ()

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        if any(lost[slot] for slot in self.kept):
            return Fate.DELETED
        present = [slot for slot, count in enumerate(total) if count]
        if present and all(lost[slot] >= total[slot] for slot in present):
            return Fate.DELETED
        return Fate.CHANGED if any(lost) else Fate.UNCHANGED


@dataclass(frozen=True)
class Intersection(DeletionRule):
    """intersection: a value stays while both sides still hold it."""

    label: str = "δ·δ"

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        if any(total[slot] and lost[slot] >= total[slot] for slot in range(len(total))):
            return Fate.DELETED
        return Fate.UNCHANGED


@dataclass(frozen=True)
class Difference(DeletionRule):
    """subtract / subtractByKey: a left record stays while it is not deleted; deleting right-side
    records can make left records appear (their key is no longer subtracted)."""

    label: str = "−"
    appears: bool = True

    def fate(self, lost: Sequence[int], total: Sequence[int]) -> Fate:
        return Fate.DELETED if lost and lost[0] else Fate.UNCHANGED
