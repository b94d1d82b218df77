"""Tracing models, one module per entity."""

from lineage_server.tracing.models.trace import Direction, Trace, TraceKind, TraceStatus

__all__ = ["Direction", "Trace", "TraceKind", "TraceStatus"]
