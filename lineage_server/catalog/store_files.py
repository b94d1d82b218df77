"""Files of the lineage store the server may delete: only paths inside the configured store root."""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

log = logging.getLogger("lineage_server.catalog")

MANIFEST = "run.json"  # written by capture_agent.record.store in each run folder


def local_root(store: str) -> Path | None:
    """The store root as a resolved local folder, or None when it is not a local path (hdfs://...)."""
    path = _strip_file_scheme(store)
    if "://" in path:
        return None
    return Path(os.path.realpath(os.path.abspath(path)))


def inside_root(root: Path, location: str) -> Path | None:
    """``location`` resolved (symlinks followed), if it lies strictly inside ``root``; else None."""
    path = _strip_file_scheme(location)
    if "://" in path or not os.path.isabs(path):
        return None
    resolved = Path(os.path.realpath(path))
    return resolved if resolved != root and resolved.is_relative_to(root) else None


def run_folder_of(root: Path, location: Path, app_id: str) -> Path | None:
    """The run folder (a child of the root) holding ``location``, if its manifest names ``app_id``."""
    if location.parent == root:
        return None
    folder = root / location.relative_to(root).parts[0]
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return folder if isinstance(manifest, dict) and manifest.get("app_id") == app_id else None


def outermost(paths: Iterable[Path]) -> list[Path]:
    """The paths not inside another of them, sorted (deleting those deletes all)."""
    kept: list[Path] = []
    for path in sorted(set(paths), key=lambda p: (len(p.parts), str(p))):
        if not any(path.is_relative_to(parent) for parent in kept):
            kept.append(path)
    return sorted(kept)


def remove_paths(root: Path, paths: Iterable[Path]) -> list[Path]:
    """Delete each path (a file, or a folder and all it holds) after checking it again; returns those deleted."""
    removed: list[Path] = []
    for path in paths:
        # Checked again at deletion time: a symlink swapped in since planning must not be followed.
        if inside_root(root, str(path)) != path or not os.path.lexists(path):
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)  # never follows symlinks inside the folder
            else:
                path.unlink()
            removed.append(path)
        except OSError as exc:
            log.warning("lineage store: could not delete %s: %s", path, exc)
    return removed


def _strip_file_scheme(location: str) -> str:
    if location.startswith("file://"):
        return location[len("file://") :]
    if location.startswith("file:"):
        return location[len("file:") :]
    return location
