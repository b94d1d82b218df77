"""The record side's settings, resolved through the agent's one settings path (``load_settings``)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class RecordSettings:
    """Whether record-level capture runs, and where its lineage store is."""

    enabled: bool
    store: str


def resolve_settings(store: str | None, enabled: bool | None) -> RecordSettings:
    """Arguments of LineageContext first, then the agent's settings (file, environment, defaults)."""
    disabled = os.environ.get("LINEAGE_DISABLED", "").strip().lower() in ("1", "true", "yes", "on")
    return RecordSettings(enabled=enabled if enabled is not None else not disabled,
                          store=store or os.environ.get("LINEAGE_STORE") or "")
