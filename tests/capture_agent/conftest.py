from __future__ import annotations

from tests.capture_agent.http_server import ingest_server
from tests.spark_fixtures import sc, spark

__all__ = ["ingest_server", "sc", "spark"]
