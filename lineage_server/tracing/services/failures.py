"""The failures a user reads when a trace, a what-if or a diff cannot be answered."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from capture_agent.record.errors import LineageError
from capture_agent.record.query.questions import TraceCancelled
from capture_agent.record.storage.layouts.base import MissingTable


class TraceFailure(Exception):
    """A trace that cannot be answered; the message tells the user what to do."""


@contextmanager
def lineage_failures(run_dir: str) -> Iterator[None]:
    """Turns what the capture agent's engine raises into the failure a user reads."""
    try:
        yield
    except (TraceCancelled, TraceFailure):
        raise
    except KeyError as exc:
        what = exc.args[0] if exc.args else exc
        raise TraceFailure(f"{what} (the run folder {run_dir} holds another run?)") from None
    except MissingTable as exc:
        raise TraceFailure(f"a lineage table is missing: {exc}; it was deleted since capture") from None
    except (LineageError, ValueError) as exc:
        raise TraceFailure(str(exc)) from None
