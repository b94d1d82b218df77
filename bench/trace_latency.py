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
import os
import random
import tempfile
import threading
import time
from operator import add
from pathlib import Path
from typing import Any

from _asking_server import (
    TRACE_PARTS,
    Api,
    add_server_arguments,
    captured_wordcount,
    report,
    set_up_server,
    word_trace,
    wordcount_session,
)
from _ingest_server import running_server
from record_capture import zipf_text

EXTRA = ("records", "jobs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=1024.0, help="text input size (default 1024)")
    parser.add_argument("--traces", type=int, default=10, help="traces in a row, then at once (default 10)")
    parser.add_argument("--no-plain", action="store_true", help="skip the plain word count yardstick")
    add_server_arguments(parser)
    args = parser.parse_args()

    text, _ = zipf_text(args.data_dir, args.size_mb, args.seed)
    var = Path(tempfile.mkdtemp(prefix="trace-bench-", dir=args.data_dir))
    setup = set_up_server(var, args)

    with running_server(setup.env, var, workers=2, threads=4, celery=True) as server:
        base = f"http://127.0.0.1:{server.port}"
        app_id, words, plain_s, captured_s = capture(text, base, setup.agent_token, str(var / "store"), args)
        api = Api(base, setup.personal_token)
        rng = random.Random(args.seed)
        picked = rng.sample(words, 2 * args.traces + 1)
        print(f"\ninput {os.path.getsize(text) / 1e6:.0f} MB; plain word count {plain_s:.1f} s, captured "
              f"{captured_s:.1f} s; {len(words)} output records; server {base}, worker on {args.master}")
        word_trace(api, app_id, picked[-1], args.poll)  # the worker's first trace of this run (its code loaded)
        in_row = [word_trace(api, app_id, w, args.poll) for w in picked[: args.traces]]
        p50 = report(f"{args.traces} traces in a row (ms)", in_row, TRACE_PARTS, EXTRA)["total"]
        at_once: list[dict[str, Any]] = []
        barrier = threading.Barrier(args.traces)

        def ask(word: str) -> None:
            barrier.wait()
            at_once.append(word_trace(api, app_id, word, args.poll))

        began = time.perf_counter()
        threads = [threading.Thread(target=ask, args=(w,)) for w in picked[args.traces: 2 * args.traces]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        makespan = time.perf_counter() - began
        if len(at_once) != args.traces:
            raise RuntimeError("some traces asked at once did not finish")
        p50_once = report(f"{args.traces} traces at once (ms; one worker runs them one by one)", at_once, TRACE_PARTS,
                          EXTRA)["total"]
    print(f"\np50 in a row {p50 / 1000:.2f} s (goal <= 1 s); at once p50 {p50_once / 1000:.2f} s, all "
          f"{args.traces} done in {makespan:.2f} s")
    if plain_s:
        print(f"p50 in a row / plain word count: {p50 / 1000 / plain_s:.3f}")


def capture(text: str, server: str, token: str, store: str, args: Any) -> tuple[str, list[str], float, float]:
    """Runs the plain word count (timed), then the captured one registered with ``server``; returns
    (application id, the output words, plain seconds, captured seconds)."""
    spark = wordcount_session("trace-bench-wordcount", args.master)
    try:
        plain_s = 0.0
        if not args.no_plain:
            began = time.perf_counter()
            spark.sparkContext.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect()
            plain_s = time.perf_counter() - began
        app_id, _, counts, captured_s = captured_wordcount(spark, text, server, token, store)
        return app_id, list(counts), plain_s, captured_s
    finally:
        spark.stop()

if __name__ == "__main__":
    main()
