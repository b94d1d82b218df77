"""Trace latency through the server: API request to finished trace, through Celery, with a warm worker.

The word count of record_capture.py (Zipf text over an 8,000-word vocabulary) is captured with a
LineageContext and registered with a real server started here: gunicorn and one Celery worker
(its Spark session warm on LINEAGE_SPARK_MASTER), on the embedded defaults in a scratch folder,
or on --database-url / --broker-url. Then backward traces of one output record each (a word chosen
by a value predicate, as a user clicking it) are asked through the REST API with a personal token
and polled to their end (every --poll seconds): --traces in a row, then --traces at once.

Printed per trace and as medians: the whole request-to-finished time, and its split from the
trace's own timings: queued (created -> taken by the worker), open + select (the lineage store
opened, the selection evaluated), walk (the trace itself; of which Spark: steps run as Spark jobs),
store (the answer written as Parquet, with the input lines read by offset), and the rest (HTTP,
polling, the bookkeeping writes). The plain PySpark word count over the same file, timed in the same
run, is the yardstick: what re-running the job to look would cost.

    .venv/bin/python bench/trace_latency.py --size-mb 64          # quick
    .venv/bin/python bench/trace_latency.py                       # 1 GB, the headline figures
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from operator import add
from pathlib import Path
from typing import Any

from _ingest_server import ensure_database, manage, running_server
from record_capture import zipf_text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
PARTS = ("queued", "open_select", "walk", "spark", "store", "rest")
PERSONAL_TOKEN = (
    "from django.contrib.auth import get_user_model; "
    "from lineage_server.accounts.services import create_personal_token; "
    "print(create_personal_token(get_user_model().objects.get(username='admin'), 'trace bench')[1])"
)


class Api:
    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(path if path.startswith("http") else self.base + path, data=data,
                                         method=method, headers={"Authorization": f"Bearer {self.token}",
                                                                 "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.load(response)


def one_trace(api: Api, app_id: str, word: str, poll: float) -> dict[str, Any]:
    """Asks the backward trace of ``word``'s count and polls it to its end; returns its figures (ms)."""
    start = time.perf_counter()
    asked = api.call("POST", "/api/v1/traces/", {
        "application": app_id, "direction": "backward", "recompute": True, "name": f"bench: {word}",
        "selection": {"predicate": {"field": 0, "op": "equals", "value": word}}})
    while True:
        trace = api.call("GET", asked["url"])
        if trace["status"] not in ("queued", "running"):
            break
        time.sleep(poll)
    total = (time.perf_counter() - start) * 1000
    if trace["status"] != "succeeded":
        raise RuntimeError(f"trace {trace['id']} {trace['status']}: {trace['error']}")
    t = trace["summary"]["timings"]
    split = {"queued": t["queued_ms"] or 0, "open_select": t["open_ms"] + t["select_ms"], "walk": t["walk_ms"],
             "spark": t["spark_ms"], "store": t["store_ms"]}
    split["rest"] = total - sum(v for k, v in split.items() if k != "spark")
    return {"word": word, "total": total, "records": trace["result_count"], "spark_jobs": t["spark_jobs"], **split}


def report(title: str, rows: list[dict[str, Any]]) -> float:
    print(f"\n{title}")
    print(f"  {'word':<14}{'total':>8}" + "".join(f"{p:>12}" for p in PARTS) + f"{'records':>10}{'jobs':>6}")
    for r in rows:
        print(f"  {r['word']:<14}{r['total']:>8.0f}" + "".join(f"{r[p]:>12.0f}" for p in PARTS)
              + f"{r['records']:>10}{r['spark_jobs']:>6}")
    median = {k: statistics.median(r[k] for r in rows) for k in ("total", *PARTS)}
    print(f"  {'median (ms)':<14}{median['total']:>8.0f}" + "".join(f"{median[p]:>12.0f}" for p in PARTS))
    return median["total"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=1024.0, help="text input size (default 1024)")
    parser.add_argument("--traces", type=int, default=10, help="traces in a row, then at once (default 10)")
    parser.add_argument("--data-dir", default=str(ROOT / "var" / "bench"), help="generated inputs")
    parser.add_argument("--database-url", default="",
                        help="default: SQLite in a scratch folder; a PostgreSQL one is created, emptied first")
    parser.add_argument("--broker-url", default="", help="default: the embedded filesystem broker")
    parser.add_argument("--master", default="local[2]", help="the job's and the worker's Spark master")
    parser.add_argument("--poll", type=float, default=0.02, help="seconds between two status reads")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain word count yardstick")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    text, _ = zipf_text(args.data_dir, args.size_mb, args.seed)
    var = Path(tempfile.mkdtemp(prefix="trace-bench-", dir=args.data_dir))
    env = {**os.environ, "LINEAGE_VAR_DIR": str(var), "LINEAGE_SPARK_MASTER": args.master,
           "PYSPARK_PYTHON": sys.executable, "DEBUG": "false", "LINEAGE_HTTPS": "false"}  # http on loopback
    env.update({k: v for k, v in (("DATABASE_URL", args.database_url), ("CELERY_BROKER_URL", args.broker_url)) if v})
    if args.database_url.startswith("postgres"):
        ensure_database(args.database_url, reset=True)  # a database of the bench's own, emptied
    manage(env, "migrate", "--noinput", "-v", "0")
    agent_token = Path(manage(env, "ensure_local_setup", "--var", str(var)).splitlines()[-1]).read_text().strip()
    personal_token = manage(env, "shell", "-c", PERSONAL_TOKEN).splitlines()[-1]

    with running_server(env, var, workers=2, threads=4, celery=True) as server:
        base = f"http://127.0.0.1:{server.port}"
        app_id, words, plain_s, captured_s = capture(text, base, agent_token, str(var / "store"), args)
        api = Api(base, personal_token)
        rng = random.Random(args.seed)
        picked = rng.sample(words, 2 * args.traces + 1)
        print(f"\ninput {os.path.getsize(text) / 1e6:.0f} MB; plain word count {plain_s:.1f} s, captured "
              f"{captured_s:.1f} s; {len(words)} output records; server {base}, worker on {args.master}")
        one_trace(api, app_id, picked[-1], args.poll)  # the worker's first trace of this run (its code loaded)
        in_row = [one_trace(api, app_id, w, args.poll) for w in picked[: args.traces]]
        p50 = report(f"{args.traces} traces in a row (ms)", in_row)
        at_once: list[dict[str, Any]] = []
        barrier = threading.Barrier(args.traces)

        def ask(word: str) -> None:
            barrier.wait()
            at_once.append(one_trace(api, app_id, word, args.poll))

        began = time.perf_counter()
        threads = [threading.Thread(target=ask, args=(w,)) for w in picked[args.traces: 2 * args.traces]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        makespan = time.perf_counter() - began
        if len(at_once) != args.traces:
            raise RuntimeError("some traces asked at once did not finish")
        p50_once = report(f"{args.traces} traces at once (ms; one worker runs them one by one)", at_once)
    print(f"\np50 in a row {p50 / 1000:.2f} s (goal <= 1 s); at once p50 {p50_once / 1000:.2f} s, all "
          f"{args.traces} done in {makespan:.2f} s")
    if plain_s:
        print(f"p50 in a row / plain word count: {p50 / 1000 / plain_s:.3f}")


def capture(text: str, server: str, token: str, store: str, args: Any) -> tuple[str, list[str], float, float]:
    """Runs the plain word count (timed), then the captured one registered with ``server``; returns
    (application id, the output words, plain seconds, captured seconds)."""
    from pyspark.sql import SparkSession

    import capture_agent
    from capture_agent import LineageContext

    spark = (SparkSession.builder.master(args.master).appName("trace-bench-wordcount")
             .config("spark.driver.memory", "6g").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    try:
        plain_s = 0.0
        if not args.no_plain:
            began = time.perf_counter()
            spark.sparkContext.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect()
            plain_s = time.perf_counter() - began
        agent = capture_agent.enable(spark, server_url=server, token=token, spool_dir=os.path.join(store, "spool"))
        try:
            lc = LineageContext(spark, store=store)
            began = time.perf_counter()
            counts = lc.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect()
            captured_s = time.perf_counter() - began
            agent.flush(60)
        finally:
            capture_agent.disable()
        return spark.sparkContext.applicationId, [w for w, _ in counts], plain_s, captured_s
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
