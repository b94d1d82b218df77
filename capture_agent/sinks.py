"""Where converted v1 events go: the small sink interface and its local implementations."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capture_agent.config import Settings

log = logging.getLogger("capture_agent")

Event = dict[str, Any]


class Sink:
    """Receives batches of v1 events; implementations must never raise into the caller."""

    def emit(self, events: Sequence[Event]) -> None:
        raise NotImplementedError

    def flush(self, timeout: float) -> None:
        """Delivers what is pending within ``timeout`` seconds (default: nothing pending)."""

    def close(self, timeout: float = 10.0) -> None:
        """Flushes within ``timeout`` seconds and releases resources."""


class NoopSink(Sink):
    """Discards events, counting them (for benchmarks and dry runs)."""

    def __init__(self) -> None:
        self.count = 0

    def emit(self, events: Sequence[Event]) -> None:
        self.count += len(events)


class FileSink(Sink):
    """Appends one JSON object per line to a file."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(os.path.expanduser(path))
        self._lock = threading.Lock()
        self._handle: Any = None
        self._failed = False

    def emit(self, events: Sequence[Event]) -> None:
        if not events:
            return
        lines = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
        with self._lock:
            try:
                if self._handle is None:
                    directory = os.path.dirname(self.path)
                    if directory:
                        os.makedirs(directory, exist_ok=True)
                    self._handle = open(self.path, "a", encoding="utf-8")
                self._handle.write(lines)
                self._handle.flush()
                self._failed = False
            except OSError as exc:
                if not self._failed:
                    log.warning("lineage: cannot write events to %s: %s", self.path, exc)
                self._failed = True

    def close(self, timeout: float = 10.0) -> None:
        with self._lock:
            if self._handle is not None:
                try:
                    self._handle.close()
                except OSError:
                    pass
                self._handle = None


class CollectingSink(Sink):
    """Keeps events in memory, bounded; useful in notebooks and tests."""

    def __init__(self, max_events: int = 100_000) -> None:
        self.events: list[Event] = []
        self.max_events = max_events
        self._lock = threading.Lock()

    def emit(self, events: Sequence[Event]) -> None:
        with self._lock:
            room = self.max_events - len(self.events)
            self.events.extend(list(events)[: max(0, room)])


def make_sink(settings: Settings) -> Sink:
    """Builds the sink the settings name."""
    if settings.sink == "noop":
        return NoopSink()
    if settings.sink == "file":
        return FileSink(settings.file_sink_path)
    from capture_agent.sender import HttpSink

    return HttpSink(settings)
