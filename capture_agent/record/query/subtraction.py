"""Invertible combines in a what-if: an integer sum per key (``reduceByKey(operator.add)``: a
count, a total) without some records is its kept output less what those records contributed.
``foldByKey(0, operator.add)`` and ``aggregateByKey(0, operator.add, operator.add)`` (a zero
value that is the int 0) are the same sum: their kept recipe is a ``combineByKey`` whose first
aggregate is ``worker.functions.plus_zero`` (``0 + value``) and whose merges are ``operator.add``.

Only ``operator.add``, named as such in the kept job, is taken as invertible: a pickled function
(a lambda adding its arguments) cannot be told from one that is not, and a float sum is not
exact once subtracted (both take the replays that combine again). Every value involved must be an
``int``; otherwise the caller combines again.

A sum tells whether its key survives only when it is not 0: a key left at 0 with no record
added to it may have lost every record or kept records summing to 0. Lineage decides it at a
first combine (its reduce side's record of that key is deleted by lineage exactly when every
record of the key is); past a later shuffle records may move between keys, which lineage does not
see, so such a key is undecided and the caller replays the stage on its keys.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

from pyroaring import BitMap64

from capture_agent.record.worker.functions import LocalCombine

INVERTIBLE = ("_operator:add", "operator:add")  # reduceByKey's functions a sum of ints can be inverted for
PLUS_ZERO = "capture_agent.record.worker.functions:plus_zero"  # a fold's first aggregate from the zero 0


def invertible(recipe: dict[str, Any]) -> bool:
    """Whether a kept recipe is a ``reduceByKey`` with ``operator.add``, or a ``combineByKey``
    with ``plus_zero`` and ``operator.add`` twice (a fold or aggregate of ints from 0)."""
    args = recipe.get("args") or []
    adds = [{"name": n} for n in INVERTIBLE]
    if recipe.get("method") == "reduceByKey":
        return bool(args) and args[0] in adds
    return (recipe.get("method") == "combineByKey" and len(args) >= 3 and args[0] == {"name": PLUS_ZERO}
            and args[1] in adds and args[2] in adds)


def ints(values: Iterable[Any]) -> bool:
    return all(type(v) is int for v in values)


def sums(records: Iterable[tuple[Any, Any]]) -> dict[Any, Any]:
    """Per key, the sum of its records' values."""
    found: dict[Any, Any] = {}
    for key, value in records:
        found[key] = found[key] + value if key in found else value
    return found


def lost_sums(job: Any, build: Any, combine: dict[str, Any], source_seq: int, ids: BitMap64) -> dict[Any, Any] | None:
    """Per key, the sum of the pairs that the deleted records ``ids`` of a combine's source (node
    ``source_seq``, read through narrow operations) made: their records read back by position,
    the job's narrow functions run on them alone in Spark tasks. None when the job's records
    cannot be read back here or a sum is not an int."""
    if job.values is None:
        return None
    source = job.job["nodes"][str(source_seq)]
    records = [v for _, v in job.values.values(job.store.point(source["input"]), ids)]
    if not records:
        return {}
    sc = job.sc
    given = sc.parallelize(records, max(1, min(len(records) // 10_000, sc.defaultParallelism)))
    lost_build = type(build)(job, {}, {source_seq: given})
    lost = sums(lost_build.rdd(combine["on"]["ref"]).mapPartitions(LocalCombine(None, operator.add)).collect())
    return lost if ints(lost.values()) else None


def subtracted(old: dict[Any, Any], removed: dict[Any, Any], added: dict[Any, Any],
               gone: frozenset[Any] | None) -> dict[Any, Any] | None:
    """The new sums of the keys of ``removed`` and ``added`` (per key, what left and what came):
    their ``old`` sums less what left plus what came, without the keys that lose every record.
    ``gone``: the keys lineage says lose every record, when it decides every key that nothing
    came to (None: it does not, and such a key left at 0 is undecided). None when a key is
    undecided, a key that records left was not in ``old``, or a value is not an int."""
    if not (ints(old.values()) and ints(removed.values()) and ints(added.values())):
        return None
    new: dict[Any, Any] = {}
    for key in removed.keys() | added.keys():
        if key in removed and key not in old:
            return None
        value = old.get(key, 0) - removed.get(key, 0) + added.get(key, 0)
        if key in added:
            new[key] = value
        elif gone is not None:
            if key not in gone:
                new[key] = value
        elif value != 0:
            new[key] = value
        else:
            return None
    return new
