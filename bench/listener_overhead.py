"""Overhead of the capture agent on PySpark jobs, against the same jobs without it.

Runs (a) a multi-stage job (word count over generated text, joined with a small RDD) and
(b) a job of thousands of tiny tasks, alternating plain runs with runs under the agent (noop
sink, file sink, and HTTP sink pointed at a closed port: the server-down case). Prints median
wall times and the median of per-round ratios captured/plain. Goal: <= 1.05 on both.

    .venv/bin/python bench/listener_overhead.py [--runs 7] [--text-mb 8] [--tasks 2000]
        [--modes plain,noop,file,http-down,python-listener] [--jobs multi-stage,tiny-tasks]

``python-listener`` forces the pure-Python fallback listener (no jar), for comparison.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession

import capture_agent

WORDS = [f"w{i}" for i in range(5000)]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_text(path: Path, megabytes: float) -> None:
    rng = random.Random(7)
    target = int(megabytes * 1024 * 1024)
    written = 0
    with open(path, "w") as handle:
        while written < target:
            line = " ".join(rng.choice(WORDS) for _ in range(12)) + "\n"
            handle.write(line)
            written += len(line)


def multi_stage_job(sc: Any, text_path: str) -> int:
    counts = (sc.textFile(text_path, 4)
              .flatMap(lambda line: line.split())
              .map(lambda word: (word, 1))
              .reduceByKey(lambda a, b: a + b, 4))
    ranks = sc.parallelize([(w, i % 10) for i, w in enumerate(WORDS)], 2)
    return counts.join(ranks, 4).filter(lambda kv: kv[1][1] > 2).count()


def tiny_tasks_job(sc: Any, tasks: int) -> int:
    return sc.parallelize(range(tasks * 2), tasks).map(lambda x: x + 1).count()


def timed(job: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    result = job()
    return time.perf_counter() - start, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--text-mb", type=float, default=8.0)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--modes", default="plain,noop,file,http-down")
    parser.add_argument("--jobs", default="multi-stage,tiny-tasks")
    args = parser.parse_args()
    # The server-down warnings are expected here; keep the figures readable.
    logging.getLogger("capture_agent").setLevel(logging.ERROR)

    spark = (SparkSession.builder.master("local[2]").appName("listener-overhead")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    sc = spark.sparkContext
    sc.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="lineage-bench-"))
    text_path = work / "words.txt"
    write_text(text_path, args.text_mb)
    all_modes: dict[str, dict[str, Any] | None] = {
        "plain": None,
        "noop": {"sink": "noop"},
        "file": {"sink": "file", "file_sink_path": str(work / "events.jsonl")},
        "http-down": {"sink": "http", "server_url": f"http://127.0.0.1:{closed_port()}",
                      "spool_dir": str(work / "spool")},
        "python-listener": {"sink": "noop", "jar": str(work / "no-such.jar")},
    }
    modes = {name: all_modes[name] for name in args.modes.split(",")}
    assert "plain" in modes, "the plain mode is the baseline"
    all_jobs: dict[str, Callable[[], int]] = {
        "multi-stage": lambda: multi_stage_job(sc, str(text_path)),
        "tiny-tasks": lambda: tiny_tasks_job(sc, args.tasks),
    }
    jobs = {name: all_jobs[name] for name in args.jobs.split(",")}
    print(f"python {sys.version.split()[0]}, spark {sc.version}, master {sc.master}, "
          f"text {args.text_mb} MB, tiny tasks {args.tasks}, runs {args.runs} (+{args.warmup} warm-up)",
          flush=True)
    for job_name, job in jobs.items():
        times: dict[str, list[float]] = {mode: [] for mode in modes}
        stops: list[float] = []
        results: set[int] = set()
        kinds: dict[str, str] = {}
        for round_index in range(args.warmup + args.runs):
            order = list(modes)
            if round_index % 2:
                order.reverse()  # neither mode always runs first (warm caches, GC phase)
            for mode in order:
                overrides = modes[mode]
                agent = capture_agent.enable(spark, **overrides) if overrides else None
                if agent is not None:
                    kinds[mode] = agent.listener_kind
                elapsed, result = timed(job)
                if agent is not None:
                    start = time.perf_counter()
                    capture_agent.disable()
                    stops.append(time.perf_counter() - start)
                results.add(result)
                if round_index >= args.warmup:
                    times[mode].append(elapsed)
        plain = times["plain"]
        print(f"\n{job_name}: results {sorted(results)} (listeners: {kinds})")
        print(f"  {'mode':<10} {'median s':>9} {'min s':>8} {'ratio (median of per-round)':>28}")
        for mode, values in times.items():
            ratios = [v / p for v, p in zip(values, plain, strict=True)]
            print(f"  {mode:<10} {statistics.median(values):9.3f} {min(values):8.3f} "
                  f"{statistics.median(ratios):28.3f}")
        print(f"  disable() median {statistics.median(stops):.3f} s (not in the job's time)", flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
