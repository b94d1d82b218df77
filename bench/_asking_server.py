"""What the benches that ask a real server share (trace_latency.py, tpcds_trace_latency.py,
diff_latency.py): the server's environment on the embedded defaults in a folder of their own (or
on --database-url / --broker-url), its tokens, REST calls with a personal token polled to their
end, a word count captured and registered with it, and the table of request-to-finished times
split by the answer's own timings."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from operator import add
from pathlib import Path
from typing import Any

from _ingest_server import ensure_database, manage
from _own_applications import bench_session

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the benches run as scripts from bench/
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
PERSONAL_TOKEN = (
    "from django.contrib.auth import get_user_model; "
    "from lineage_server.accounts.services import create_personal_token; "
    "print(create_personal_token(get_user_model().objects.get(username='admin'), 'bench')[1])"
)
TRACE_PARTS = ("queued", "open_select", "walk", "spark", "store", "rest")  # of which spark: in the walk


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the server, the Spark master and the polling."""
    parser.add_argument("--data-dir", default=str(ROOT / "var" / "bench"), help="generated inputs")
    parser.add_argument("--database-url", default="",
                        help="default: SQLite in the bench's folder; a PostgreSQL one is created, emptied first")
    parser.add_argument("--broker-url", default="", help="default: the embedded filesystem broker")
    parser.add_argument("--master", default="local[2]", help="the job's and the worker's Spark master")
    parser.add_argument("--poll", type=float, default=0.02, help="seconds between two status reads")
    parser.add_argument("--seed", type=int, default=7)


@dataclass(frozen=True)
class ServerSetup:
    """The server's environment (its folder ``var``), and the agent's and a person's tokens."""

    env: dict[str, str]
    agent_token: str
    personal_token: str


def set_up_server(var: Path, args: Any, reset: bool = True) -> ServerSetup:
    """Migrates the database of the server kept in ``var`` (a PostgreSQL one emptied first with
    ``reset``) and makes sure of its team, admin and tokens (kept ones are kept)."""
    env = {**os.environ, "LINEAGE_VAR_DIR": str(var), "LINEAGE_SPARK_MASTER": args.master,
           "PYSPARK_PYTHON": sys.executable, "DEBUG": "false", "LINEAGE_HTTPS": "false"}  # http on loopback
    env.update({k: v for k, v in (("DATABASE_URL", args.database_url), ("CELERY_BROKER_URL", args.broker_url)) if v})
    if args.database_url.startswith("postgres"):
        ensure_database(args.database_url, reset=reset)  # a database of the bench's own
    manage(env, "migrate", "--noinput", "-v", "0")
    agent_token = Path(manage(env, "ensure_local_setup", "--var", str(var)).splitlines()[-1]).read_text().strip()
    return ServerSetup(env, agent_token, manage(env, "shell", "-c", PERSONAL_TOKEN).splitlines()[-1])


class Api:
    """REST calls to the server with a personal token."""

    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(path if path.startswith("http") else self.base + path, data=data,
                                         method=method, headers={"Authorization": f"Bearer {self.token}",
                                                                 "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.load(response)

    def lines(self, path: str) -> list[Any]:
        """A JSON lines download, one value a line."""
        request = urllib.request.Request(self.base + path, headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, timeout=600) as response:
            return [json.loads(line) for line in response if line.strip()]

    def ask(self, path: str, body: dict[str, Any], poll: float) -> tuple[dict[str, Any], float]:
        """Posts a question and polls it to its end (every ``poll`` seconds); returns the finished
        answer and the request-to-finished time (ms). A failed or cancelled answer raises."""
        start = time.perf_counter()
        asked = self.call("POST", path, body)
        while True:
            answer = self.call("GET", asked["url"])
            if answer["status"] not in ("queued", "running"):
                break
            time.sleep(poll)
        total = (time.perf_counter() - start) * 1000
        if answer["status"] != "succeeded":
            raise RuntimeError(f"{path}{answer['id']} {answer['status']}: {answer['error']}")
        return answer, total


def word_trace(api: Api, app_id: str, word: str, poll: float) -> dict[str, Any]:
    """Asks the backward trace of ``word``'s count and polls it to its end; returns its figures (ms)."""
    trace, total = api.ask("/api/v1/traces/", {
        "application": app_id, "direction": "backward", "recompute": True, "name": f"bench: {word}",
        "selection": {"predicate": {"field": 0, "op": "equals", "value": word}}}, poll)
    return trace_figures(trace, total, word)


def trace_figures(trace: dict[str, Any], total: float, label: str) -> dict[str, Any]:
    """A finished trace's request-to-finished time ``total`` (ms) split by its own timings
    (``TRACE_PARTS``), with its records and Spark jobs."""
    t = trace["summary"]["timings"]
    split = {"queued": t["queued_ms"] or 0, "open_select": t["open_ms"] + t["select_ms"], "walk": t["walk_ms"],
             "spark": t["spark_ms"], "store": t["store_ms"]}
    split["rest"] = total - sum(v for k, v in split.items() if k != "spark")
    return {"label": label, "total": total, "records": trace["result_count"], "jobs": t["spark_jobs"], **split}


def wordcount_session(app_name: str, master: str) -> Any:
    """The driver's SparkSession of the benches' word counts."""
    return bench_session(app_name, master)


def captured_wordcount(spark: Any, text: str, server: str, token: str, store: str) -> tuple[str, str, dict[str, int],
                                                                                          float]:
    """The word count of ``text`` captured with a LineageContext into ``store`` and registered with
    ``server``; returns (application id, run folder, the counts, seconds)."""
    import capture_agent
    from capture_agent import LineageContext

    agent = capture_agent.enable(spark, server_url=server, token=token, spool_dir=os.path.join(store, "spool"))
    try:
        lc = LineageContext(spark, store=store)
        began = time.perf_counter()
        counts = lc.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect()
        seconds = time.perf_counter() - began
        agent.flush(60)
    finally:
        capture_agent.disable()
    return spark.sparkContext.applicationId, lc.run_dir, dict(counts), seconds


def report(title: str, rows: list[dict[str, Any]], parts: Sequence[str], extra: Sequence[str] = ()) -> dict[str, float]:
    """Prints each row's ``label``, total and ``parts`` (ms), then ``extra`` columns, and the medians;
    returns the medians of the total and the parts."""
    print(f"\n{title}")
    print(f"  {'':<14}{'total':>8}" + "".join(f"{p:>12}" for p in parts) + "".join(f"{e:>10}" for e in extra))
    for r in rows:
        print(f"  {r['label']:<14}{r['total']:>8.0f}" + "".join(f"{r[p]:>12.0f}" for p in parts)
              + "".join(f"{r[e]!s:>10}" for e in extra))
    median = {k: statistics.median(r[k] for r in rows) for k in ("total", *parts)}
    print(f"  {'median (ms)':<14}{median['total']:>8.0f}" + "".join(f"{median[p]:>12.0f}" for p in parts))
    return median
