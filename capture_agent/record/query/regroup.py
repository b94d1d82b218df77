"""Regrouped groups in a what-if: a ``groupByKey`` whose reduce side kept its groups at capture
(``worker.boundary``: a task of at most ``LINEAGE_KEEP_AGGREGATES`` records) gets its new groups at
the keys its changed input records touch from those kept groups alone: each group less the values
of the records that left it, plus those of the records that came (as multisets, the kept order
otherwise kept), a group left empty gone. Its input (a join re-keyed by a map, say) is then needed
at the changed records only, never whole, whatever the functions after it do with a group
(``mapValues(len)``, a sort, any function: the group itself is exact).

A removed value not found in its kept group (a function that is not deterministic, a value that
does not equal itself) makes the caller replay the stage on its keys instead.
"""

from __future__ import annotations

from typing import Any

from pyspark.resultiterable import ResultIterable

from capture_agent.record.query.multisets import patched


def regrouped(old: dict[Any, list[Any]], removed: list[tuple[Any, Any]], added: list[tuple[Any, Any]]
              ) -> dict[Any, list[Any]] | None:
    """The new groups of the keys of ``removed`` and ``added`` ((key, value) records that left
    and came): their ``old`` groups less the ones, plus the others, without the groups left
    empty. None when a removed record is not in its key's old group."""
    leaving: dict[Any, list[Any]] = {}
    coming: dict[Any, list[Any]] = {}
    for key, value in removed:
        leaving.setdefault(key, []).append(value)
    for key, value in added:
        coming.setdefault(key, []).append(value)
    new: dict[Any, list[Any]] = {}
    for key in [*leaving, *(k for k in coming if k not in leaving)]:
        values = patched(old.get(key, []), leaving.get(key, []), coming.get(key, []))
        if values is None:
            return None
        if values:
            new[key] = values
    return new


def groups(pairs: dict[Any, list[Any]]) -> list[tuple[Any, ResultIterable]]:
    """(key, group) records as groupByKey gives them."""
    return [(key, ResultIterable(values)) for key, values in pairs.items()]
