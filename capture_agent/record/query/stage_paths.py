"""How a what-if's replay computed each stage it touched: one class per path, named in the
replay's report (``replay_strategies.report``: ``stage_paths``, {"op #node": path name}).

- ``subtracted``: an integer sum (``reduceByKey(operator.add)``, ``foldByKey(0, add)``,
  ``aggregateByKey(0, add, add)``) whose output was kept; reads
  the deleted records only (a first combine) or the changed records (a later one).
- ``recombined``: a first combine whose map side kept its aggregates; reads the map-side
  partitions holding deleted records, whole.
- ``regrouped``: a later ``groupByKey`` whose groups were kept (``query.regroup``); reads the
  changed records only: each touched group is its kept members less those that left, plus those
  that came.
- ``keys``: a later shuffle the changed records reach; reads its input at the keys they touch.
- ``in-full``: a later shuffle re-keyed before another one that needs its whole output; reads
  its whole input.
"""

from __future__ import annotations

from typing import ClassVar


class StagePath:
    """One way a replay computes a stage's new output."""

    name: ClassVar[str]
    description: ClassVar[str]


class Subtracted(StagePath):
    name = "subtracted"
    description = ("each touched key's kept sum, less what the records that left it contributed, plus what the "
                   "records that came contribute: only those records are read")


class Recombined(StagePath):
    name = "recombined"
    description = ("the map-side partitions holding deleted records combined again, merged with the others' kept "
                   "aggregates")


class Regrouped(StagePath):
    name = "regrouped"
    description = ("each touched group's kept members, less the records that left it, plus the records that came: "
                   "only those records are read")


class KeysReplayed(StagePath):
    name = "keys"
    description = "the stage run again on the keys the changed records touch, its other keys' output kept"


class InFull(StagePath):
    name = "in-full"
    description = "the stage's whole output computed, for a later stage that re-keys it"


STAGE_PATHS: dict[str, type[StagePath]] = {p.name: p for p in (Subtracted, Recombined, Regrouped, KeysReplayed, InFull)}
