"""CSProv against recursive querying, in one run: index build time, and the lineage of random items.

    .venv/bin/python bench/csprov.py [--triples 10000000] [--queries 100] [--threshold 25000]

Makes triples shaped like the paper's text-curation workflow (``_csprov_data``), builds the
CSProv index (the Spark job the server's worker runs), then asks the ancestors of ``--queries``
random items (and of ``--deep`` random items of the workflow's last table, whose lineage spans a
whole document and the entities it shares with others: the paper's LC-LL class) two ways, and
checks that the answers (items and triples) are identical:

- CSProv: ``ProvenanceIndex.lineage`` as the API answers it: the item's set, its set lineage from
  the set dependencies, the triples of those sets only, recursive querying over them in memory.
- RQ: recursive querying over all the triples with Spark, as the paper's baseline: the triples
  hash-partitioned on dst and cached in memory, one join per step from the item up to its roots.

Prints the build's phases and counts, query times (mean, median, p95, max) and the ratios.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _csprov_data import curation_triples, documents_for  # noqa: E402 - after the path set-up above

from capture_agent.provenance import (  # noqa: E402
    BuildOptions,
    ProvenanceIndex,
    build_index,
    layout,
)
from capture_agent.record.storage.fs import StoreFS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=10_000_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--deep", type=int, default=20, help="queries of items of the last table (KB)")
    parser.add_argument("--threshold", type=int, default=25_000)
    parser.add_argument("--buckets", type=int, default=layout.DEFAULT_BUCKETS)
    parser.add_argument("--master", default="local[*]")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--work", default=str(ROOT / "var" / "bench-csprov"))
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    logging.getLogger("capture_agent.provenance").setLevel(logging.INFO)  # the build's phases and rounds

    work = Path(args.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    store = StoreFS.resolve(str(work))
    spark = _spark(args.master, args.driver_memory)

    t = time.monotonic()
    batch = str(work / "batches" / "1.parquet")
    curation_triples(spark, documents_for(args.triples), args.seed).write.parquet("file://" + batch)
    generated = time.monotonic() - t
    print(f"generated {spark.read.parquet('file://' + batch).count():,} triples in {generated:.1f} s")

    t = time.monotonic()
    meta = build_index(spark, store, [batch], str(work / "index"), BuildOptions(args.threshold, None, args.buckets))
    built = time.monotonic() - t
    print(f"index built in {built:.1f} s: {json.dumps(meta['timings'])}")
    print(f"  counts: {json.dumps(meta['counts'])}")

    rng = random.Random(args.seed)
    items = spark.read.parquet(f"file://{work}/index/{layout.ITEMS}").select("item")
    sample = [r[0] for r in items.sample(fraction=min(1.0, 20 * args.queries / max(meta["counts"]["items"], 1)),
                                         seed=args.seed).limit(20 * args.queries).collect()]
    queries = rng.sample(sample, min(args.queries, len(sample)))
    kb = [r[0] for r in items.where("item like 'KB:%'").sample(fraction=min(1.0, 20 * args.deep / max(
        meta["counts"]["items"] // 1000, 1)), seed=args.seed).limit(20 * args.deep).collect()]
    deep = rng.sample(kb, min(args.deep, len(kb)))

    t = time.monotonic()
    index = ProvenanceIndex.open(store, str(work / "index"))
    opened = time.monotonic() - t
    triples, prepared = _cached_triples(spark, batch)
    report: dict[str, Any] = {
        "triples": meta["counts"]["triples"], "generate_s": round(generated, 1), "build_s": round(built, 1),
        "build_phases_s": meta["timings"], "counts": meta["counts"], "csprov_open_s": round(opened, 2),
        "rq_prepare_s": round(prepared, 1),
        "random": compare(spark, index, triples, queries), "deep": compare(spark, index, triples, deep),
    }
    print(json.dumps(report, indent=1))
    (work / "report.json").write_text(json.dumps(report, indent=1))
    spark.stop()
    if not (report["random"]["identical_answers"] and report["deep"]["identical_answers"]):
        sys.exit(1)


def compare(spark: Any, index: ProvenanceIndex, triples: Any, queries: list[str]) -> dict[str, Any]:
    """CSProv and RQ answers to the same queries: times, ratios, whether they agree, what CSProv read."""
    cs_times, answers = [], []
    for item in queries:
        t = time.monotonic()
        answers.append(index.lineage(item))
        cs_times.append(time.monotonic() - t)
    rq_times, mismatches = [], 0
    for item, answer in zip(queries, answers, strict=True):
        t = time.monotonic()
        reached, edges = recursive_query_spark(spark, triples, item)
        rq_times.append(time.monotonic() - t)
        if reached != set(answer.items) or edges != set(answer.edges):
            mismatches += 1
            print(f"  DIFFERENT answer for {item}: RQ {len(reached)} items, CSProv {len(answer.items)}")
    if not queries:
        return {"queries": 0}
    return {
        "queries": len(queries), "csprov_s": _stats(cs_times), "rq_s": _stats(rq_times),
        "mean_ratio": round(statistics.mean(rq_times) / statistics.mean(cs_times), 1),
        "median_ratio": round(statistics.median(rq_times) / statistics.median(cs_times), 1),
        "identical_answers": mismatches == 0,
        "ancestors": _stats([len(a.items) for a in answers], 0),
        "sets_read": _stats([len(a.sets_read) for a in answers], 0),
        "triples_read": _stats([a.triples_read for a in answers], 0),
    }


def recursive_query_spark(spark: Any, triples: Any, item: str) -> tuple[set[str], set[tuple[str, str, str]]]:
    """The ancestors of ``item`` and the triples into them, one Spark join per step (the paper's RQ)."""
    from pyspark.sql import functions as F

    reached: set[str] = set()
    edges: set[tuple[str, str, str]] = set()
    frontier = [item]
    while frontier:
        wanted = spark.createDataFrame([(f,) for f in frontier], "dst string")
        rows = triples.join(F.broadcast(wanted), "dst").select("src", "dst", "op").collect()
        frontier = []
        for src, dst, op in rows:
            edges.add((src, dst, op or ""))
            if src not in reached and src != item:
                reached.add(src)
                frontier.append(src)
    return reached, edges


def _cached_triples(spark: Any, batch: str) -> tuple[Any, float]:
    """The triples hash-partitioned on dst and cached in memory, as the paper's provRDD."""
    t = time.monotonic()
    triples = spark.read.parquet("file://" + batch).select("src", "dst", "op").repartition("dst").cache()
    triples.count()
    return triples, time.monotonic() - t


def _stats(values: list[float], digits: int = 3) -> dict[str, float]:
    ordered = sorted(values)
    return {"mean": round(statistics.mean(ordered), digits), "median": round(statistics.median(ordered), digits),
            "p95": round(ordered[int(0.95 * (len(ordered) - 1))], digits), "max": round(ordered[-1], digits)}


def _spark(master: str, memory: str) -> Any:
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (SparkSession.builder.master(master).appName("bench-csprov").config("spark.driver.memory", memory)
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "16").getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


if __name__ == "__main__":
    main()
