"""A what-if's result as a table in the lineage store, read back page by page or streamed whole.

One Parquet file per what-if: first the records the deletion reaches at each capture point on the
way (in the run's order: ``deleted`` and ``changed`` ids, no values), then every record of the
target by fate, with values:

| column | type | holds |
|---|---|---|
| capture_id | string | the capture point |
| record_id | int64, null | the record's id (null for a record that appears only without the deleted ones) |
| fate | string | deleted, changed, unchanged or appeared |
| value | string, null | the record as JSON (the target's records; the old value of a changed one) |
| new_value | string, null | a changed record's new value, an appeared record's value (JSON; replay only) |

Without a replay the target's fates are lineage's: deleted (dead), changed (reached), unchanged
(unreached), with no new values and nothing appeared.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from capture_agent.record.query.results import CHUNK, ROW_GROUP, as_record, id_chunks, json_text, publish
from capture_agent.record.query.whatif import Classes, Impact
from capture_agent.record.storage.fs import StoreFS
from capture_agent.record.storage.tables import parquet_file, take_rows

FATES = ("deleted", "changed", "unchanged", "appeared")
COLUMNS = ("capture_id", "record_id", "fate", "value", "new_value")


@dataclass
class WhatIfSummary:
    """What the database keeps of a what-if's result."""

    count: int = 0  # rows of the file
    output: dict[str, int] = field(default_factory=dict)  # fate -> records at the target
    first_changed: list[dict[str, Any]] = field(default_factory=list)  # old and new side by side


def _schema() -> Any:
    import pyarrow as pa

    return pa.schema([("capture_id", pa.string()), ("record_id", pa.int64()), ("fate", pa.string()),
                      ("value", pa.string()), ("new_value", pa.string())])


def _json(value: Any) -> str:
    return json_text(value)


def _target_rows(impact: Impact, classes: Classes | None) -> Iterator[dict[str, Any]]:
    cid = impact.target
    if classes is None:
        point = impact.session.store.point(cid)
        for fate, ids in (("deleted", impact.deleted_ids()), ("changed", impact.changed_ids()),
                          ("unchanged", impact.unchanged_ids())):
            for chunk in id_chunks(ids):  # values a chunk at a time: a target of any size in bounded memory
                for record_id, value in impact.session.values.values(point, chunk):
                    yield {"capture_id": cid, "record_id": record_id, "fate": fate, "value": _json(value),
                           "new_value": None}
        return
    for i, v in zip(classes.ids["deleted"], classes.deleted, strict=True):
        yield {"capture_id": cid, "record_id": i, "fate": "deleted", "value": _json(v), "new_value": None}
    for i, (old, new) in zip(classes.ids["changed"], classes.changed, strict=True):
        yield {"capture_id": cid, "record_id": i, "fate": "changed", "value": _json(old), "new_value": _json(new)}
    for i, v in zip(classes.ids["unchanged"], classes.unchanged, strict=True):
        yield {"capture_id": cid, "record_id": i, "fate": "unchanged", "value": _json(v), "new_value": None}
    for v in classes.appeared:
        yield {"capture_id": cid, "record_id": None, "fate": "appeared", "value": None, "new_value": _json(v)}


def write_whatif(impact: Impact, classes: Classes | None, path: str, first_changed: int = 50) -> WhatIfSummary:
    """Writes ``impact`` (with ``classes`` when the job was replayed) to ``path`` in the run's store,
    ``CHUNK`` rows at a time (the file's size does not weigh on memory)."""
    import pyarrow.parquet as pq

    store = impact.session.store
    summary = WhatIfSummary()
    handle, local = tempfile.mkstemp(prefix="whatif-", suffix=".parquet")
    os.close(handle)
    try:
        with pq.ParquetWriter(local, _schema(), compression="zstd") as writer:
            for cid in sorted(impact.fates, key=lambda c: store.point(c).seq):
                if cid == impact.target:
                    continue
                fates = impact.fates[cid]
                for fate, ids in (("deleted", fates.deleted), ("changed", fates.changed)):
                    for batch in _batches({"capture_id": cid, "record_id": i, "fate": fate, "value": None,
                                           "new_value": None} for i in ids):
                        _write(writer, batch, summary)
            summary.output = dict.fromkeys(FATES, 0)
            for batch in _batches(_target_rows(impact, classes)):
                _write(writer, batch, summary)
                for row in batch:
                    summary.output[row["fate"]] += 1
                room = first_changed - len(summary.first_changed)
                if room > 0:
                    changed = (_as_record(r) for r in batch if r["fate"] == "changed")
                    summary.first_changed.extend(islice(changed, room))
        publish(store.fs, local, path)
    finally:
        os.unlink(local)
    return summary


def _batches(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    while batch := list(islice(rows, CHUNK)):
        yield batch


def _write(writer: Any, rows: list[dict[str, Any]], summary: WhatIfSummary) -> None:
    import pyarrow as pa

    writer.write_table(pa.Table.from_pylist(rows, schema=_schema()), row_group_size=ROW_GROUP)
    summary.count += len(rows)


def _as_record(row: dict[str, Any]) -> dict[str, Any]:
    """As a trace's record, with the row's fate and its new value parsed."""
    new_value = row["new_value"]
    return {**as_record(row, "fate"), "new_value": None if new_value is None else json.loads(new_value)}


def read_whatif_page(fs: StoreFS, path: str, start: int, size: int, capture_id: str | None = None,
                     fate: str | None = None) -> tuple[int, list[dict[str, Any]]]:
    """(rows matching, the records of matching rows ``start`` to ``start + size``), of one capture
    point and one fate when given."""
    import pyarrow.compute as pc

    pf = parquet_file(fs, path)
    if capture_id is None and fate is None:
        total = int(pf.metadata.num_rows)
        rows = list(range(start, min(start + size, total)))
    else:
        table = pf.read(columns=["capture_id", "fate"])
        mask = None
        for column, wanted in (("capture_id", capture_id), ("fate", fate)):
            if wanted is not None:
                test = pc.equal(table.column(column), wanted)
                mask = test if mask is None else pc.and_(mask, test)
        matching = pc.indices_nonzero(mask).to_pylist()
        total = len(matching)
        rows = matching[start:start + size]
    if not rows:
        return total, []
    return total, [_as_record(r) for r in take_rows(pf, list(COLUMNS), rows).to_pylist()]


def iter_whatif(fs: StoreFS, path: str) -> Iterator[dict[str, Any]]:
    """Every row of a what-if's result, a row group at a time."""
    pf = parquet_file(fs, path)
    for group in range(pf.metadata.num_row_groups):
        for row in pf.read_row_group(group, columns=list(COLUMNS)).to_pylist():
            yield _as_record(row)
