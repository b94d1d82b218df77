"""A run's record-level lineage as provenance triples (source item, derived item, operation).

Every record at a capture point is an item named ``<run id>/<capture id>#<record id>`` (the
point as the server registers it, so items of different runs never meet; record ids as the store
numbers them, ``partition << 32 | position``); each association row gives one triple per input
record, with the operation ``<kind>:<operator>`` and each item's capture point as its dataset, so
the capture points of the run are the workflow's dataset graph. Input records are
where the triples start (they derive from no record). Points whose layout keeps no per-row inputs
(``mapPartitions(lineage="partition")``, ``pipe``) are left out and named in ``skipped``.

Columns are those of ``capture_agent.provenance.triples`` (this layer does not import it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from capture_agent.record.storage.manifest import LineageStore

FIELDS = ("src", "dst", "op", "src_dataset", "dst_dataset")


def item_name(point: str, record_id: int) -> str:
    """How a record is named as an item of the provenance graph (``point``: ``<run id>/<capture id>``)."""
    return f"{point}#{record_id}"


@dataclass
class RunTriples:
    """The triples of one run, produced a partition table at a time (``tables``)."""

    store: LineageStore
    skipped: dict[str, str] = field(default_factory=dict)  # capture id -> why it is left out

    def tables(self) -> Iterator[Any]:
        """Arrow tables of ``FIELDS``, one per partition table of each capture point."""
        for point in self.store.by_seq():
            if point.is_input or not point.parents:
                continue
            run = self.store.run_id
            try:
                for out_ids, slots in point.layout.associations(self.store.fs, point, self.store.point):
                    for slot, inputs in enumerate(slots):
                        yield _triples(f"{run}/{point.capture_id}", f"{run}/{point.parents[slot]}",
                                       f"{point.kind}:{point.op}", out_ids, inputs)
            except NotImplementedError:
                self.skipped[point.capture_id] = f"its layout ({point.layout.name}) keeps no per-row inputs"


def _triples(point: str, parent: str, op: str, out_ids: Any, inputs: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = pc.list_parent_indices(inputs)
    dst = pc.take(out_ids, rows).cast(pa.string())
    src = pc.list_flatten(inputs).cast(pa.string())
    n = len(src)
    return pa.table({
        "src": pc.binary_join_element_wise(pa.scalar(parent), src, "#"),
        "dst": pc.binary_join_element_wise(pa.scalar(point), dst, "#"),
        "op": pa.repeat(pa.scalar(op), n),
        "src_dataset": pa.repeat(pa.scalar(parent), n),
        "dst_dataset": pa.repeat(pa.scalar(point), n),
    })
