"""Errors raised by record-level lineage capture and tracing."""

from __future__ import annotations


class LineageError(Exception):
    """Base class of record-level lineage errors."""


class UnsupportedOperation(LineageError, NotImplementedError):
    """A captured RDD was asked for an operation whose lineage is not captured."""

    def __init__(self, operation: str, hint: str = "") -> None:
        message = f"record-level lineage capture does not support {operation}()"
        if hint:
            message += f": {hint}"
        super().__init__(message)
        self.operation = operation


class InputChangedError(LineageError):
    """An input file changed (size or modification time) since its lineage was captured."""

    def __init__(self, path: str, recorded: tuple[int, int], current: tuple[int, int] | None) -> None:
        now = "it no longer exists" if current is None else f"now size={current[0]} mtime={current[1]}"
        super().__init__(
            f"input {path} changed since lineage was captured (size={recorded[0]} mtime={recorded[1]}, {now}); "
            "the traced records cannot be shown from it"
        )
        self.path = path


class ValuesNotAvailable(LineageError):
    """The values of records at a capture point are neither stored nor replayable here."""


class NotCaptured(LineageError):
    """The lineage asked for was never captured (e.g. getLineage() before any action)."""


class IncompleteLineage(LineageError):
    """A trace needs association tables that their tasks could not write (disk full, permissions...)."""

    def __init__(self, missing: dict[str, dict[int, str]]) -> None:
        parts = []
        for capture_id, tables in sorted(missing.items()):
            reasons = sorted(set(tables.values()))
            parts.append(f"{capture_id}: {len(tables)} table(s) (partitions {sorted(tables)[:10]}) - {reasons[0]}")
        super().__init__("the lineage of this run is incomplete, tables its tasks could not write are needed: "
                         + "; ".join(parts))
        self.missing = missing


class ReplayNotPossible(LineageError):
    """A what-if cannot compute new values: the job's functions are not at hand (a run opened from
    its folder), or the output or an input cannot be replayed; the message says which."""
