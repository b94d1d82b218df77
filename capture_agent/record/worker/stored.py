"""A job's function kept in a run's folder, loaded only inside a Spark task.

A replay from the folder (``query.stored_job``) passes a ``StoredFunction`` wherever the job
passed one of its functions. It carries the function's cloudpickled bytes, travels to the
executors inside the task like any function, and unpickles them at its first call there. Called
anywhere else (the worker's driver, the web process), it refuses: kept functions are the
capturing team's code and run only in Spark tasks.
"""

from __future__ import annotations

from typing import Any

LOAD_FAILED = "lineage: a kept function cannot be loaded"  # marks the task error the driver looks for


class OutsideTask(RuntimeError):
    """A kept function was called outside a Spark task."""


class StoredFunction:
    """A kept function: its digest and cloudpickled bytes; callable inside Spark tasks only."""

    def __init__(self, digest: str, data: bytes) -> None:
        self.digest = digest
        self.data = data
        self._loaded: Any = None

    def _function(self) -> Any:
        if self._loaded is None:
            from pyspark import TaskContext

            if TaskContext.get() is None:
                raise OutsideTask(f"the kept function {self.digest[:12]} would run outside a Spark task; kept "
                                  "functions run only inside the tasks of a replay")
            from pyspark import cloudpickle

            try:
                self._loaded = cloudpickle.loads(self.data)
            except Exception as exc:
                raise RuntimeError(f"{LOAD_FAILED} ({type(exc).__name__}: {exc}); is a library the job used "
                                   "missing on the cluster?") from exc
        return self._loaded

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._function()(*args, **kwargs)

    def __reduce__(self) -> tuple[Any, ...]:
        return (StoredFunction, (self.digest, self.data))  # the bytes travel, never the loaded function

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoredFunction) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __repr__(self) -> str:
        return f"<kept function {self.digest[:12]} ({len(self.data)} bytes)>"
