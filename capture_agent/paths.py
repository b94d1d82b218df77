"""Dataset paths: one spelling per dataset, and its size when that is cheap to learn."""

from __future__ import annotations

import collections
import logging
import os
import re
from collections.abc import Callable
from typing import Any

from capture_agent.protocol import DATASET_IO

log = logging.getLogger("capture_agent")

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_MAX_LOCAL_ENTRIES = 20000


def make_qualifier(default_fs: str, cwd: str) -> Callable[[str], str]:
    """Returns a function spelling paths the way Spark SQL does (``file:/abs/path``).

    RDD inputs carry the path as the user typed it while SQL plans carry it qualified; the
    server can only join the two when they are spelled alike.
    """
    local = default_fs.startswith("file:") or not default_fs
    base = default_fs.rstrip("/")

    def qualify(path: str) -> str:
        path = path.strip()
        if not path:
            return path
        if path.startswith("file://") and not path.startswith("file:///"):
            return path  # file://host/... is not ours to rewrite
        if path.startswith("file:///"):
            return "file:" + path[len("file://"):]
        if _SCHEME.match(path):
            return path
        if local:
            return "file:" + os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
        return base + path if path.startswith("/") else path

    return qualify


def _local_size(path: str) -> int | None:
    if any(ch in path for ch in "*?[{"):
        return None
    try:
        if os.path.isfile(path):
            return os.path.getsize(path)
        if not os.path.isdir(path):
            return None
        total = 0
        seen = 0
        for root, _dirs, files in os.walk(path):
            for name in files:
                seen += 1
                if seen > _MAX_LOCAL_ENTRIES:
                    return None
                if name.startswith((".", "_")):
                    continue  # Hadoop's hidden files (.crc, _SUCCESS) are not data
                try:
                    total += os.path.getsize(os.path.join(root, name))
                except OSError:
                    pass
        return total
    except OSError:
        return None


class DatasetSizer:
    """Measures dataset sizes on the agent's sender thread (never on a listener thread)."""

    def __init__(self, jvm: Any = None, hadoop_conf: Any = None, cache_size: int = 512) -> None:
        self._jvm = jvm
        self._hadoop_conf = hadoop_conf
        self._read_cache: collections.OrderedDict[str, int | None] = collections.OrderedDict()
        self._cache_size = cache_size
        self._hadoop_failed = False

    def size(self, path: str, direction: str) -> int | None:
        # A dataset read by many jobs is measured once; a written one after each write.
        if direction == "read" and path in self._read_cache:
            self._read_cache.move_to_end(path)
            return self._read_cache[path]
        size = self._measure(path)
        if direction == "read":
            self._read_cache[path] = size
            if len(self._read_cache) > self._cache_size:
                self._read_cache.popitem(last=False)
        return size

    def _measure(self, path: str) -> int | None:
        if path.startswith("file:"):
            return _local_size(path[len("file:"):])
        if not _SCHEME.match(path):
            return _local_size(path)
        if self._jvm is None or self._hadoop_conf is None or self._hadoop_failed:
            return None
        if any(ch in path for ch in "*?[{"):
            return None
        try:
            hadoop_path = self._jvm.org.apache.hadoop.fs.Path(path)
            fs = hadoop_path.getFileSystem(self._hadoop_conf)
            return int(fs.getContentSummary(hadoop_path).getLength())
        except Exception as exc:  # noqa: BLE001 - a missing size is fine, a dead JVM too
            if "FileNotFound" not in str(exc):
                log.debug("lineage: cannot size %s: %s", path, exc)
            if "Connection" in type(exc).__name__ or "Py4JNetworkError" in type(exc).__name__:
                self._hadoop_failed = True
            return None

    def fill(self, events: list[dict[str, Any]]) -> None:
        """Adds ``size_bytes`` to dataset_io events that lack it."""
        for event in events:
            if event.get("type") == DATASET_IO and "size_bytes" not in event:
                size = self.size(event["path"], event["direction"])
                if size is not None:
                    event["size_bytes"] = size
