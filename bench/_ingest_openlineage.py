"""OpenLineage producers for the ingest bench: workflows of Spark, Airflow and dbt runs sent to lineage/batch."""

from __future__ import annotations

import hashlib
import json
import random
import urllib.error
import urllib.request
import uuid
from collections.abc import Sequence
from typing import Any

from _ingest_agents import SimulatedAgent
from _ingest_events import Event, SimulatedApplication

from capture_agent.transport import PostResult
from tests.lineage_server.openlineage_events import airflow_run, dbt_run, spark_run

# Catalog rows one run of each kind gives: (dataset IOs, i.e. datasets read + written).
_KINDS = [("spark", 2), ("airflow", 2), ("dbt", 3)]


def simulated_workflow(tag: str, rng: random.Random) -> tuple[list[SimulatedApplication], list[Event]]:
    """5-15 runs (one application each) whose START, RUNNING and COMPLETE events interleave, as a scheduler's do."""
    apps, queues = [], []
    for _ in range(rng.randint(5, 15)):
        run_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        kind, ios = rng.choice(_KINDS)
        if kind == "spark":
            events = spark_run(run_id, output=f"/bench/{tag}/{run_id}")
        else:
            events = airflow_run(run_id) if kind == "airflow" else dbt_run(run_id)
        app = SimulatedApplication(f"openlineage-{run_id}", events=events, dataset_ios=ios, finalized=False)
        apps.append(app)
        queues.append(list(events))
    merged: list[Event] = []
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        merged.append(queue.pop(0))
    return apps, merged


def event_id(event: Event) -> str:
    """The id the server gives an OpenLineage event (api/serializers/openlineage.py: a hash of its JSON)."""
    canonical = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "openlineage:" + hashlib.sha256(canonical.encode()).hexdigest()


class OpenLineageAgent(SimulatedAgent):
    """An OpenLineage producer posting its runs' events in batches, re-sending some as the other agents do."""

    path = "/api/v1/lineage/batch"

    def workflow(self, n: int, shared_inputs: list[str]) -> tuple[list[SimulatedApplication], list[Event]]:
        return simulated_workflow(f"{self.run_tag}-{self.index}-{n}", self.rng)

    def send(self, batch: Sequence[Event], timeout: float) -> PostResult:
        request = urllib.request.Request(
            self.url, data=json.dumps(list(batch)).encode(), method="POST",
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                counts: dict[str, Any] = json.loads(response.read())
                return PostResult("ok", response.status, accepted=counts["accepted"], duplicates=counts["duplicates"])
        except urllib.error.HTTPError as error:
            kind = "retry" if error.code >= 500 else "rejected"
            return PostResult(kind, error.code, error.read(400).decode("utf-8", "replace"))
        except OSError as error:
            return PostResult("retry", None, f"{type(error).__name__}: {error}")
