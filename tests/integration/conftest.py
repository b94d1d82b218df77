from __future__ import annotations

from tests.spark_fixtures import sc, spark

__all__ = ["sc", "spark"]
