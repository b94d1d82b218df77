"""Enable-by-configuration: with ``enabled`` true (``LINEAGE_ENABLED=true`` or the config file's
``enabled = true``), every new SparkContext gets the agent."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from capture_agent.config import ConfigError, load_settings
from capture_agent.enabling import enable

log = logging.getLogger("capture_agent")

_installed = False


def install_auto_enable(overrides: Mapping[str, Any] | None = None) -> bool:
    """Wraps SparkContext.__init__ when the resolved settings say ``enabled`` (and not disabled).

    Args:
        overrides: settings that beat the config file and the environment (``run`` passes
            ``enabled=True``); each captured SparkContext is enabled with them too.

    Returns:
        True when the hook is (or already was) installed.
    """
    global _installed
    if _installed:
        return True
    chosen = dict(overrides or {})
    try:
        settings = load_settings(chosen)
    except ConfigError as exc:
        # Runs at `import capture_agent`: a bad setting is reported, never raised into the job.
        log.warning("lineage: agent settings are invalid, SparkContexts are not captured: %s", exc)
        return False
    if not settings.auto_enable:
        return False
    from pyspark import SparkContext

    original = SparkContext.__init__

    def __init__(self: SparkContext, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        _enable_quietly(self, chosen)

    SparkContext.__init__ = __init__  # type: ignore[method-assign]
    # A context that already exists (e.g. in a notebook) is captured too.
    active = SparkContext._active_spark_context
    if active is not None:
        _enable_quietly(active, chosen)
    _installed = True
    return True


def _enable_quietly(sc: Any, overrides: dict[str, Any]) -> None:
    try:
        enable(sc, **overrides)
    except Exception as exc:  # noqa: BLE001 - a bad setting must not stop the job here
        log.error("lineage: LINEAGE_ENABLED is set but the agent did not start: %s", exc)
