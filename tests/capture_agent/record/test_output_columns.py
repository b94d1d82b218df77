"""The output point of a captured DataFrame action keeps where its columns come from (the column
lineage of its query, ``capture.frame_columns``), whether the job is captured unmodified (records
on) or written against a LineageContext: against the lineage written out by hand for a join +
aggregate + expressions query (``captured_columns``), kept in ``run.json`` and sent on the point's
``capture_point`` event as the ingest schema takes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capture_agent.record.capture.events import capture_point_event
from capture_agent.record.storage.manifest import LineageStore
from tests.ingest_schema import assert_valid_events
from tests.lineage_server.tracing.captured_columns import Source, expected_sources, totals_query, write_tables

pytestmark = pytest.mark.spark


def as_sets(facet: dict[str, Any]) -> tuple[dict[str, set[Source]], set[Source]]:
    """The facet's inputs as the oracle's (dataset path, column, type, kind) sets."""
    def tuples(items: list[dict[str, Any]]) -> set[Source]:
        return {(f"{i['namespace']}:{i['name']}", i["field"], t["type"], t["subtype"])
                for i in items for t in i["transformations"]}

    return ({column: tuples(value["inputFields"]) for column, value in facet["fields"].items()},
            tuples(facet["dataset"]))


@pytest.mark.parametrize("unmodified", [True, False], ids=["unmodified", "explicit"])
def test_an_outputs_columns_name_their_source_columns(spark: Any, tmp_path: Path, unmodified: bool) -> None:
    from capture_agent.record import LineageContext
    from capture_agent.record.capture import implicit

    write_tables(spark, tmp_path)
    if unmodified:
        lc = implicit.enable_records(spark, str(tmp_path / "store"))
        try:
            rows = totals_query(spark, tmp_path).collect()
        finally:
            implicit.disable_records(spark)
    else:
        lc = LineageContext(spark, store=str(tmp_path / "store"))
        rows = totals_query(lc, tmp_path).collect()
    assert {r.country for r in rows} == {"jp", "fr"}
    (output,) = [p for p in lc.store.by_seq() if p.kind == "output"]
    assert as_sets(output.column_lineage) == expected_sources(tmp_path)

    reopened = LineageStore.open(lc.store.run_dir, lc.store.fs).point(output.capture_id)
    assert reopened.column_lineage == output.column_lineage
    event = capture_point_event("local-1", lc.store, output)
    assert event["column_lineage"] == output.column_lineage
    assert_valid_events([event])
