"""The collecting sink: events kept in memory, for notebooks and tests."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from capture_agent.protocol import Event
from capture_agent.sinks.base import Sink


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
