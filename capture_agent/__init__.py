"""Capture agent: records a PySpark job's coarse lineage and sends it to the lineage server.

Two lines in a job::

    import capture_agent
    capture_agent.enable(spark)          # SparkSession or SparkContext; settings as keywords

or no code change at all: with ``LINEAGE_ENABLED=true`` in the environment, run the job as
``python -m capture_agent run job.py [args]`` (or ``import capture_agent`` anywhere before the
SparkContext is created) and every SparkContext created afterwards is captured.
``LINEAGE_DISABLED=true`` (or ``LINEAGE_ENABLED=false``) wins over both and makes ``enable()`` a
no-op. Settings, their precedence and defaults are listed in ``capture_agent.config``; what the agent
sends the server is named in ``capture_agent.protocol``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from capture_agent.agent import Agent, current_agent, disable
from capture_agent.autoenable import install_auto_enable
from capture_agent.config import ConfigError, Settings, load_settings
from capture_agent.enabling import enable
from capture_agent.sinks import CollectingSink, FileSink, NoopSink, Sink

__all__ = [
    "Agent",
    "CollectingSink",
    "ConfigError",
    "FileSink",
    "NoopSink",
    "Settings",
    "Sink",
    "current_agent",
    "disable",
    "enable",
    "load_settings",
]

install_auto_enable()


# Record-level lineage (capture_agent.record) is imported on first use: it needs pyarrow and pyroaring.
__all__ += ["LineageContext", "LineageRDD", "last_lineage"]

if TYPE_CHECKING:
    from capture_agent.record import LineageContext, LineageRDD
    from capture_agent.record.capture.implicit import last_lineage


def __getattr__(name: str) -> Any:
    if name in ("LineageContext", "LineageRDD"):
        from capture_agent import record

        return getattr(record, name)
    if name == "last_lineage":
        from capture_agent.record.capture.implicit import last_lineage

        return last_lineage
    raise AttributeError(f"module 'capture_agent' has no attribute {name!r}")
