"""Renderers beyond DRF's JSON: CSV for the lists a user downloads (``?format=csv``)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from rest_framework.renderers import BaseRenderer


class CSVRenderer(BaseRenderer):
    """A list of flat records as CSV, a header of their keys first (Python's csv module quotes)."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: Mapping[str, Any] | None = None) -> bytes:
        out = io.StringIO()
        if isinstance(data, dict):  # an error answer
            data = [{"field": key, "error": " ".join(map(str, value)) if isinstance(value, list) else str(value)}
                    for key, value in data.items()]
        rows = list(data or [])
        if rows:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        return out.getvalue().encode(self.charset)
