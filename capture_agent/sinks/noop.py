"""The no-op sink: counts events and drops them."""

from __future__ import annotations

from collections.abc import Sequence

from capture_agent.protocol import Event
from capture_agent.sinks.base import Sink


class NoopSink(Sink):
    """Discards events, counting them (for benchmarks and dry runs)."""

    def __init__(self) -> None:
        self.count = 0

    def emit(self, events: Sequence[Event]) -> None:
        self.count += len(events)
