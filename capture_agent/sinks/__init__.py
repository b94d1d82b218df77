"""Sinks: where the agent's v1 events go. One module per kind, and the factory for the ``sink``
setting (OpenLineage's transports: a small interface, HTTP, file and no-op implementations).

A new kind is a ``Sink`` subclass in its own module, added to ``SINKS`` (and to
``capture_agent.config.SINK_KINDS``, which validates the setting without importing the sinks).
"""

from __future__ import annotations

from capture_agent.config import Settings
from capture_agent.sinks.base import Sink
from capture_agent.sinks.collecting import CollectingSink
from capture_agent.sinks.file import FileSink
from capture_agent.sinks.http import HttpSink
from capture_agent.sinks.noop import NoopSink

SINKS: dict[str, type[Sink]] = {"http": HttpSink, "file": FileSink, "noop": NoopSink}

__all__ = ["SINKS", "CollectingSink", "FileSink", "HttpSink", "NoopSink", "Sink", "make_sink"]


def make_sink(settings: Settings) -> Sink:
    """Builds the sink the ``sink`` setting names.

    Args:
        settings: resolved settings; ``settings.sink`` is one of ``SINKS``.

    Returns:
        A new sink (an ``HttpSink`` starts its sender thread).
    """
    return SINKS[settings.sink].from_settings(settings)
