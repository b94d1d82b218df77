"""How the retention commands print what they delete."""

from __future__ import annotations

from lineage_server.catalog.services import ApplicationDeletion, shown_path


def describe(deletion: ApplicationDeletion, dry_run: bool = False) -> list[str]:
    """Lines naming the application, its rows, the store paths removed and the locations left alone."""
    if dry_run:
        lines = [f"would delete {deletion.app_id}"]
        lines += [f"  would remove {shown_path(path)}" for path in deletion.paths]
    else:
        lines = [f"deleted {deletion.app_id} ({deletion.rows} database rows)"]
        lines += [f"  removed {shown_path(path)}" for path in deletion.removed]
    lines += [f"  left {location} (outside the lineage store)" for location in deletion.refused]
    return lines
