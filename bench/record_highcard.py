"""Record-level capture on high-cardinality data: time, CPU and Python-worker memory against plain PySpark.

Real keys are user ids, URLs, session ids: millions of distinct values. Workloads:
  wordcount  word count over text with millions of distinct words (uniform over ~8M hex words)
  join       orders joined with customers on a unique id (3 orders per customer), then summed per country
  distinct   distinct over nearly unique values, counted
  skew       groupByKey where one hot key holds half of the records, group sizes collected

Each runs plain and captured alternately, --runs times each after a warm-up, in one Spark
application (``_record_bench.Bench``: ratios of wall time, of the process tree's CPU time, and of
the Python workers' peak memory, PSS sampled from /proc every 50 ms), then prints the lineage
bytes as a share of the input. ``--worker-memory`` sets ``spark.python.worker.memory`` (PySpark's
spill threshold for its own aggregations) for both variants.

    .venv/bin/python bench/record_highcard.py                          # ~128 MB words, 1M customers
    .venv/bin/python bench/record_highcard.py --size-mb 1024 --runs 2  # the 1 GB figures
    .venv/bin/python bench/record_highcard.py --size-mb 1024 --one-partition --worker-memory 512m \
        --workloads wordcount --runs 1                                 # a 1 GB partition that must spill
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from operator import add
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from _record_bench import Bench, add_worker_reuse_flag  # noqa: E402 - after the path set-up above


def _write(path: str, lines: Any) -> None:
    """Writes generated lines once (in chunks) and renames the file into place."""
    if os.path.exists(path):
        return
    print(f"generating {path} ...", flush=True)
    with open(path + ".tmp", "w", encoding="utf-8") as out:
        for chunk in lines:
            out.write(chunk)
    os.replace(path + ".tmp", path)


def words_text(folder: str, size_mb: float, seed: int) -> str:
    """Lines of 10 words drawn uniformly from 2**23 hex words (about 8M), until ``size_mb`` MB."""
    path = os.path.join(folder, f"highcard-words-{size_mb:g}mb.txt")

    def lines() -> Any:
        rng = random.Random(seed)
        written, target = 0, int(size_mb * 1_000_000)
        while written < target:
            chunk = "".join(" ".join(f"{rng.getrandbits(23):06x}" for _ in range(10)) + "\n" for _ in range(20000))
            written += len(chunk)
            yield chunk

    _write(path, lines())
    return path


def orders_and_customers(folder: str, customers: int, seed: int) -> tuple[str, str]:
    """customers.csv: id,country (unique ids); orders.csv: order id,customer id,amount (3 per customer)."""
    customers_path = os.path.join(folder, f"customers-{customers}.csv")
    orders_path = os.path.join(folder, f"orders-{3 * customers}.csv")
    countries = [f"c{i:02d}" for i in range(60)]

    def customer_lines() -> Any:
        rng = random.Random(seed)
        for start in range(0, customers, 50000):
            yield "".join(f"u{i:08d},{rng.choice(countries)}\n" for i in range(start, min(start + 50000, customers)))

    def order_lines() -> Any:
        rng = random.Random(seed + 1)
        total = 3 * customers
        for start in range(0, total, 50000):
            yield "".join(f"o{i:09d},u{rng.randrange(customers):08d},{rng.randint(1, 500)}\n"
                          for i in range(start, min(start + 50000, total)))

    _write(customers_path, customer_lines())
    _write(orders_path, order_lines())
    return orders_path, customers_path


def nearly_unique(folder: str, count: int, seed: int) -> str:
    """``count`` values of which about 1 in 20 repeats an earlier one."""
    path = os.path.join(folder, f"nearly-unique-{count}.txt")

    def lines() -> Any:
        rng = random.Random(seed)
        for start in range(0, count, 50000):
            yield "".join(f"v{(i if rng.random() > 0.05 else rng.randrange(i + 1)):09d}\n"
                          for i in range(start, min(start + 50000, count)))

    _write(path, lines())
    return path


def skewed_pairs(folder: str, count: int, seed: int) -> str:
    """``count`` lines ``key,value``: half of them key ``hot``, the rest over 200,000 keys."""
    path = os.path.join(folder, f"skewed-{count}.csv")

    def lines() -> Any:
        rng = random.Random(seed)
        for start in range(0, count, 50000):
            yield "".join(f"{'hot' if rng.random() < 0.5 else f'k{rng.randrange(200000)}'},{i}\n"
                          for i in range(start, min(start + 50000, count)))

    _write(path, lines())
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=128.0, help="word count input size (default 128)")
    parser.add_argument("--customers", type=int, default=1_000_000, help="join: customers (3 orders each)")
    parser.add_argument("--values", type=int, default=3_000_000, help="distinct: nearly unique values")
    parser.add_argument("--pairs", type=int, default=4_000_000, help="skew: key,value records")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each variant (default 3)")
    parser.add_argument("--data-dir", default=os.path.join(ROOT, "var", "bench"), help="generated inputs")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--worker-memory", default="", help="spark.python.worker.memory (e.g. 512m)")
    parser.add_argument("--workloads", default="wordcount,join,distinct,skew")
    parser.add_argument("--one-partition", action="store_true",
                        help="read each input as ONE partition (the spill test: --size-mb 1024 --worker-memory 512m)")
    parser.add_argument("--seed", type=int, default=7)
    add_worker_reuse_flag(parser)
    args = parser.parse_args()

    os.makedirs(args.data_dir, exist_ok=True)
    workloads = args.workloads.split(",")
    conf = {"spark.python.worker.memory": args.worker_memory} if args.worker_memory else {}
    if args.one_partition:  # one input split per file, however large
        conf["spark.hadoop.mapreduce.input.fileinputformat.split.minsize"] = str(1 << 40)
    splits = 1 if args.one_partition else None
    inputs: dict[str, Any] = {}
    if "wordcount" in workloads:
        inputs["wordcount"] = words_text(args.data_dir, args.size_mb, args.seed)
    if "join" in workloads:
        inputs["join"] = orders_and_customers(args.data_dir, args.customers, args.seed)
    if "distinct" in workloads:
        inputs["distinct"] = nearly_unique(args.data_dir, args.values, args.seed)
    if "skew" in workloads:
        inputs["skew"] = skewed_pairs(args.data_dir, args.pairs, args.seed)
    bench = Bench(args, conf)
    try:
        print(f"master {args.master}, {args.runs} runs each, workers reused: {args.reuse_workers}, "
              "spark.python.worker.memory="
              f"{args.worker_memory or '(default)'}")
        if "wordcount" in workloads:
            text = inputs["wordcount"]

            def word_count(ctx: Any) -> Any:
                return ctx.textFile(text, splits).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)

            bench.compare("wordcount", os.path.getsize(text), lambda: word_count(bench.sc).count(),
                          lambda lc: word_count(lc).count())
        if "join" in workloads:
            orders, customers = inputs["join"]

            def per_country(ctx: Any) -> Any:
                amounts = ctx.textFile(orders, splits).map(lambda s: s.split(",")).map(lambda f: (f[1], int(f[2])))
                countries = ctx.textFile(customers, splits).map(lambda s: s.split(","))
                return amounts.join(countries).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)

            size = os.path.getsize(orders) + os.path.getsize(customers)
            bench.compare("join", size, lambda: per_country(bench.sc).collect(),
                          lambda lc: per_country(lc).collect())
        if "distinct" in workloads:
            values = inputs["distinct"]
            bench.compare("distinct", os.path.getsize(values),
                          lambda: bench.sc.textFile(values, splits).distinct().count(),
                          lambda lc: lc.textFile(values, splits).distinct().count())
        if "skew" in workloads:
            pairs = inputs["skew"]

            def group_sizes(ctx: Any) -> Any:
                keyed = ctx.textFile(pairs, splits).map(lambda s: s.split(",")).map(lambda f: (f[0], int(f[1])))
                return keyed.groupByKey().mapValues(len).filter(lambda kv: kv[1] > 30)

            bench.compare("skew", os.path.getsize(pairs), lambda: group_sizes(bench.sc).collect(),
                          lambda lc: group_sizes(lc).collect())
        bench.summary()
    finally:
        bench.close()


if __name__ == "__main__":
    main()
