"""The sink interface: where converted v1 events go."""

from __future__ import annotations

from collections.abc import Sequence

from capture_agent.config import Settings
from capture_agent.protocol import Event


class Sink:
    """Receives batches of v1 events; implementations must never raise into the caller."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Sink:
        """The sink the settings describe (``make_sink`` calls it for the ``sink`` setting)."""
        return cls()

    def emit(self, events: Sequence[Event]) -> None:
        raise NotImplementedError

    def flush(self, timeout: float) -> None:
        """Delivers what is pending within ``timeout`` seconds (default: nothing pending)."""

    def close(self, timeout: float = 10.0) -> None:
        """Flushes within ``timeout`` seconds and releases resources."""
