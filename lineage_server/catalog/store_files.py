"""Files of the lineage store the server may delete: only paths inside the configured store root.

A local store is handled with ``pathlib`` (symlinks resolved and checked again at deletion); a
store on a shared file system (``s3://``, ``gs://``, ``hdfs://``) through the capture agent's
``StoreFS`` (``pyarrow.fs``), where paths are plain keys: ``..`` is refused, nothing is followed.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import shutil
from collections.abc import Iterable
from pathlib import Path, PurePath, PurePosixPath
from typing import TypeVar

from capture_agent.record.storage.fs import StoreFS, local_path

P = TypeVar("P", bound=PurePath)

log = logging.getLogger("lineage_server.catalog")

MANIFEST = "run.json"  # written by capture_agent.record.storage.manifest in each run folder


def local_root(store: str) -> Path | None:
    """The store root as a resolved local folder, or None when it is not a local path (hdfs://...)."""
    path = local_path(store)
    if "://" in path:
        return None
    return Path(os.path.realpath(os.path.abspath(path)))


def inside_root(root: Path, location: str) -> Path | None:
    """``location`` resolved (symlinks followed), if it lies strictly inside ``root``; else None."""
    path = local_path(location)
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


def outermost(paths: Iterable[P]) -> list[P]:
    """The paths not inside another of them, sorted (deleting those deletes all)."""
    kept: list[P] = []
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


def remote_store(store: str) -> StoreFS | None:
    """The store as a shared file system, or None when it is a local folder."""
    if local_root(store) is not None:
        return None
    return StoreFS.resolve(store)


def remote_inside(store: StoreFS, location: str) -> PurePosixPath | None:
    """``location`` (``s3://bucket/key`` as agents register it) as a path of ``store``, if it lies
    strictly inside its root; else None."""
    scheme = location.split("://", 1)[0] if "://" in location else ""
    if scheme.replace("gcs", "gs") != store.scheme:
        return None
    path = store.path_of(location).rstrip("/")
    if ".." in path.split("/") or posixpath.normpath(path) != path:
        return None
    root = store.root.rstrip("/")
    return PurePosixPath(path) if path.startswith(root + "/") else None


def remote_run_folder(store: StoreFS, location: PurePosixPath, app_id: str) -> PurePosixPath | None:
    """The run folder (a child of the root) holding ``location``, if its manifest names ``app_id``."""
    root = PurePosixPath(store.root)
    if location.parent == root:
        return None
    folder = root / location.relative_to(root).parts[0]
    try:
        manifest = json.loads(store.read_bytes(f"{folder}/{MANIFEST}"))
    except (OSError, ValueError):
        return None
    return folder if isinstance(manifest, dict) and manifest.get("app_id") == app_id else None


def remove_remote(store: StoreFS, paths: Iterable[PurePosixPath]) -> list[PurePosixPath]:
    """Deletes each folder (or file) of a shared store; returns those deleted."""
    removed: list[PurePosixPath] = []
    for path in paths:
        try:
            if store.is_dir(str(path)):
                store.delete_dir(str(path))
            elif store.exists(str(path)):
                store.delete_file(str(path))
            else:
                continue
            removed.append(path)
        except OSError as exc:
            log.warning("lineage store: could not delete %s: %s", store.uri(str(path)), exc)
    return removed
