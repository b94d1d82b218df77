"""On-disk spool of event batches the server could not take (yet)."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("capture_agent")

_SUFFIX = ".json"


class Spool:
    """A folder of batch files named so that sorting by name is sorting by age."""

    def __init__(self, directory: str, max_bytes: int) -> None:
        self.directory = Path(directory).expanduser()
        self.rejected_directory = self.directory / "rejected"
        self.max_bytes = max_bytes
        self._sequence = itertools.count()
        self._lock = threading.Lock()

    def write(self, events: Sequence[dict[str, Any]]) -> Path | None:
        """Stores one batch atomically; returns its path, or None when the disk refused it."""
        if not events:
            return None
        body = json.dumps({"events": list(events)}, separators=(",", ":")).encode("utf-8")
        name = f"{time.time_ns():020d}-{os.getpid()}-{next(self._sequence):06d}{_SUFFIX}"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            target = self.directory / name
            temporary = self.directory / (name + ".tmp")
            with open(temporary, "wb") as handle:
                handle.write(body)
            # Readers only list *.json, so a crash mid-write never leaves half a batch for them.
            os.replace(temporary, target)
        except OSError as exc:
            log.warning("lineage: cannot spool %d events to %s: %s", len(events), self.directory, exc)
            return None
        self._enforce_bound()
        return target

    def batches(self) -> list[Path]:
        """Spooled batch files, oldest first."""
        try:
            return sorted(p for p in self.directory.iterdir() if p.name.endswith(_SUFFIX))
        except OSError:
            return []

    def read(self, path: Path) -> list[dict[str, Any]] | None:
        """The events of one batch, or None (and the file set aside) when it is unreadable."""
        try:
            data = json.loads(path.read_bytes())
            events = data["events"]
            if isinstance(events, list):
                return events
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            pass
        self.reject(path, "unreadable spool file")
        return None

    def remove(self, path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()

    def reject(self, path: Path, reason: str) -> None:
        """Moves a batch the server refused to rejected/, with the reason beside it."""
        try:
            self.rejected_directory.mkdir(parents=True, exist_ok=True)
            target = self.rejected_directory / path.name
            os.replace(path, target)
            target.with_suffix(".reason.txt").write_text(reason[:10000], encoding="utf-8")
        except OSError as exc:
            log.warning("lineage: cannot move rejected batch %s: %s", path, exc)

    def reject_events(self, events: Sequence[dict[str, Any]], reason: str) -> None:
        path = self.write(events)
        if path is not None:
            self.reject(path, reason)

    def total_bytes(self) -> int:
        total = 0
        for path in self.batches():
            with contextlib.suppress(OSError):
                total += path.stat().st_size
        return total

    def _enforce_bound(self) -> None:
        with self._lock:
            files = self.batches()
            sizes: list[int] = []
            for path in files:
                try:
                    sizes.append(path.stat().st_size)
                except OSError:
                    sizes.append(0)
            total = sum(sizes)
            dropped = 0
            for path, size in zip(files, sizes, strict=True):
                if total <= self.max_bytes:
                    break
                self.remove(path)
                total -= size
                dropped += 1
            if dropped:
                log.warning(
                    "lineage: spool %s over %d bytes, dropped the %d oldest batches",
                    self.directory,
                    self.max_bytes,
                    dropped,
                )

    @contextlib.contextmanager
    def delivery_lock(self) -> Iterator[bool]:
        """Yields True when this process may deliver the spool (no other process is at it)."""
        if fcntl is None:
            yield True
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(self.directory / ".deliver.lock", "a+")
        except OSError:
            yield True
            return
        with handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
