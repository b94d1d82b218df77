"""``capture_agent.enable``: the coarse agent (``agent.enable``), and, when the settings say
``records``, record-level lineage of every DataFrame action of the job
(``record.capture.implicit``)."""

from __future__ import annotations

import logging
from typing import Any

from capture_agent import agent as _agent

log = logging.getLogger("capture_agent")


def enable(spark_or_sc: Any, **overrides: Any) -> _agent.Agent:
    """Starts capturing lineage of a SparkSession/SparkContext (idempotent per SparkContext).

    Args:
        spark_or_sc: the SparkSession or SparkContext to watch.
        **overrides: settings by name (see capture_agent.config); ``sink`` may also be a Sink;
            ``records=True`` captures record-level lineage of every DataFrame action too.

    Returns:
        The running agent, or a disabled one when the settings say ``disabled``.

    Raises:
        ConfigError: a setting has a bad value.
    """
    agent = _agent.enable(spark_or_sc, **overrides)
    if agent.settings.records and agent.running:
        try:
            from capture_agent.record.capture.implicit import enable_records

            enable_records(spark_or_sc, overrides.get("store"))
        except Exception as exc:  # noqa: BLE001 - never into the job
            log.error("lineage: record-level capture did not start (%s); the job runs with coarse lineage only", exc)
    return agent
