"""Fixtures of the tracing tests: a captured job on the live server, and the team's people."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.lineage_server.tracing.captured import CapturedJob, capture_frame_totals, capture_word_topics
from tests.spark_fixtures import sc, spark

__all__ = ["sc", "spark"]


@pytest.fixture
def captured(spark: Any, live_server: Any, agent_token: str, tmp_path: Path) -> CapturedJob:
    """The word/topic job, captured into the test's own lineage store and registered with the live
    server (the test session's one SparkContext, so the same application id in every test)."""
    return capture_word_topics(spark, live_server.url, agent_token, tmp_path / "job")


@pytest.fixture(params=["explicit", "unmodified"])
def frame_job(request: Any, spark: Any, live_server: Any, agent_token: str, tmp_path: Path) -> tuple[str, list[Any]]:
    """A captured DataFrame job (``captured.capture_frame_totals``) on the live server: its app id
    and its rows. Twice: written against a LineageContext, and unmodified with records switched on."""
    return capture_frame_totals(spark, live_server.url, agent_token, tmp_path / "frames",
                                unmodified=request.param == "unmodified")
