"""One local SparkSession for the whole test session; import these fixtures from a conftest."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest

from tests._env import JVM_OPTIONS

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """A local[2] SparkSession shared by every test that asks for it (Spark starts once)."""
    from pyspark.sql import SparkSession

    # This JVM runs every Spark test of the process, each a few small queries whose generated classes
    # are new: it compiles with the client compiler alone, as the short-lived JVMs do (tests/_env.py).
    # With the server compiler too, compiling took half of its CPU (test_dataframes with
    # test_implicit_capture: 62 of 113 CPU s, 15 of 89 without it, the same wall time; the record
    # suite under `-n 2`: 754 -> 703 CPU s of the whole machine, 405 -> 389 s). It takes their serial
    # collector, with a young generation of 256 MB (the serial collector's default, a third of a
    # small initial heap, collected too often): on two shared cores G1's concurrent threads cost CPU
    # the tests need (CPU s, G1 -> serial: test_dataframes 168 -> 148, test_delta 55 -> 50,
    # test_whatif_replay with test_subtraction 77 -> 78).
    short_lived = os.environ.pop("SPARK_SUBMIT_OPTS", None)
    sharing = os.environ.get("LINEAGE_TESTS_JVM_SHARING", "")  # Spark's classes from the tests' archive (tests/_env.py)
    os.environ["SPARK_SUBMIT_OPTS"] = f"{JVM_OPTIONS} -Xmn256m {sharing}".strip()
    try:
        session = (
            SparkSession.builder.master("local[2]")
            .appName("lineage-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
            .getOrCreate()
        )
    finally:
        os.environ.pop("SPARK_SUBMIT_OPTS", None)
        if short_lived is not None:
            os.environ["SPARK_SUBMIT_OPTS"] = short_lived
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def sc(spark: object) -> object:
    """The SparkContext of the shared session."""
    return spark.sparkContext  # type: ignore[attr-defined]
