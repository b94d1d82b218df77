"""Fixtures of the record-level lineage tests: a LineageContext per test on the shared session."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def lc(spark: Any, tmp_path: Path) -> Iterator[Any]:
    """A LineageContext whose lineage store is the test's temporary folder. What the test cached is
    dropped after it: a later test's read of the same files (the shared tables of test_dataframes)
    would otherwise plan to read another context's cache."""
    from capture_agent.record import LineageContext

    yield LineageContext(spark, store=str(tmp_path / "lineage"))
    spark.catalog.clearCache()


@pytest.fixture(scope="session")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """test_dataframes' orders and items as Parquet folders of several files each, written once for
    the test process (the modules that read them only read them; each test captures into a lineage
    store of its own)."""
    from tests.capture_agent.record.test_dataframes import ITEM_SCHEMA, ITEMS, ORDER_SCHEMA, ORDERS

    folder = tmp_path_factory.mktemp("frame-tables")
    out = {}
    for name, rows, schema, files in (("orders", ORDERS, ORDER_SCHEMA, 3), ("items", ITEMS, ITEM_SCHEMA, 4)):
        path = str(folder / name)
        spark.createDataFrame(rows, schema).repartition(files).write.parquet(path)
        out[name] = path
    return out


@pytest.fixture
def write_text(tmp_path: Path) -> Callable[..., str]:
    """Writes lines to a text file under the test's folder and returns its path."""

    def write(name: str, lines: list[str]) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return str(path)

    return write


@pytest.fixture
def tiny_worker_memory(lc: Any) -> Iterator[None]:
    """spark.python.worker.memory=1m: every combine and group with two records or more spills (its
    first memory check, at the second record, finds the worker over it) and merges its runs."""
    conf = lc.sc._conf
    old = conf.get("spark.python.worker.memory", "512m")
    conf.set("spark.python.worker.memory", "1m")
    yield
    conf.set("spark.python.worker.memory", old)
