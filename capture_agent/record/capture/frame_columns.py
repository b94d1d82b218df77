"""Where the columns of a captured DataFrame's output come from: the column lineage of its query.

An output point of a DataFrame action keeps, for each of its columns, the source columns it comes
from and how (OpenLineage's ``columnLineage`` facet, ``capture_agent.column_lineage``), so that a
traced output row names the source columns of its columns. It is derived in the JVM by the
listener's own walk of the analyzed plan (``java/lineage/agent/ColumnLineage.java``,
``ofQuery``): of the user's query as written where the action was captured implicitly (its reads
are the datasets' own relations), else of the captured frame's plan. Never raises: a plan it
cannot read costs the output its column lineage, never its capture.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from capture_agent.column_lineage import Facet, column_lineage_facet
from capture_agent.record.capture.frame_jvm import PLAN, static_call

log = logging.getLogger("capture_agent")

COLUMN_LINEAGE_CLASS = "lineage.agent.ColumnLineage"


def output_column_lineage(lc: Any, plan: Any, columns: list[str]) -> Facet:
    """The ``columnLineage`` facet of ``columns`` (the output's visible columns) of the analyzed
    ``plan`` (a JVM LogicalPlan); empty when the plan cannot be read."""
    try:
        raw = static_call(lc, COLUMN_LINEAGE_CLASS, "ofQuery", (PLAN, plan))
        if raw is None:
            return {}
        described = json.loads(str(raw))
        wanted = set(columns)
        kept = [c for c in described.get("Columns") or [] if c.get("Name") in wanted]
        return column_lineage_facet(kept, described.get("Dataset") or [])
    except Exception as exc:  # noqa: BLE001 - column lineage must never fail the capture
        log.info("lineage: no column lineage for an output: %s", exc)
        return {}
