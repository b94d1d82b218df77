"""Enable-by-configuration: with LINEAGE_ENABLED=true, every new SparkContext gets the agent."""

from __future__ import annotations

import logging
import os
from typing import Any

log = logging.getLogger("capture_agent")

_installed = False


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def install_auto_enable() -> bool:
    """Wraps SparkContext.__init__ when LINEAGE_ENABLED is true (and not disabled).

    Returns:
        True when the hook is (or already was) installed.
    """
    global _installed
    if _installed:
        return True
    if not _truthy("LINEAGE_ENABLED") or _truthy("LINEAGE_DISABLED"):
        return False
    from pyspark import SparkContext

    original = SparkContext.__init__

    def __init__(self: SparkContext, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        try:
            from capture_agent.agent import enable

            enable(self)
        except Exception as exc:  # noqa: BLE001 - a bad setting must not stop the job here
            log.error("lineage: LINEAGE_ENABLED is set but the agent did not start: %s", exc)

    SparkContext.__init__ = __init__  # type: ignore[method-assign]
    # A context that already exists (e.g. in a notebook) is captured too.
    active = SparkContext._active_spark_context
    if active is not None:
        try:
            from capture_agent.agent import enable

            enable(active)
        except Exception as exc:  # noqa: BLE001
            log.error("lineage: LINEAGE_ENABLED is set but the agent did not start: %s", exc)
    _installed = True
    return True
