"""Fixtures of the provenance tests: the lineage store in the test's folder, a graph, the paper's triples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.capture_agent.provenance.paper import PERSON_TRIPLES, person_table
from tests.spark_fixtures import sc, spark

__all__ = ["sc", "spark"]


@pytest.fixture
def store_root(settings: Any, tmp_path: Path) -> Path:
    """The lineage store of this test (LINEAGE_STORE)."""
    settings.LINEAGE = {**settings.LINEAGE, "STORE": str(tmp_path / "store")}
    return tmp_path / "store"


def person_jsonl() -> bytes:
    """Table IV of the CSProv paper as JSON lines, ids as the paper writes them (integers)."""
    return "".join(json.dumps({"src": s, "dst": d, "op": op, "src_dataset": person_table(s),
                               "dst_dataset": person_table(d)}) + "\n" for s, d, op, _ in PERSON_TRIPLES).encode()


@pytest.fixture
def analyst_client(client_as: Any) -> Any:
    return client_as("andy", "analyst")


@pytest.fixture
def graph_url(analyst_client: Any, store_root: Path) -> str:
    made = analyst_client.post("/api/v1/provenance/graphs/", {"team": "test-team", "name": "curation",
                                                               "set_threshold": 6}, format="json")
    assert made.status_code == 201, made.json()
    return str(made.json()["url"])
