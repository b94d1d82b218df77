"""The file sink: one JSON object per line."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from typing import TextIO

from capture_agent.config import Settings
from capture_agent.protocol import Event
from capture_agent.sinks.base import Sink

log = logging.getLogger("capture_agent")


class FileSink(Sink):
    """Appends one JSON object per line to a file."""

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(os.path.expanduser(path))
        self._lock = threading.Lock()
        self._handle: TextIO | None = None
        self._failed = False

    @classmethod
    def from_settings(cls, settings: Settings) -> FileSink:
        return cls(settings.file_sink_path)

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
