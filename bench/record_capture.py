"""Record-level lineage capture: overhead against plain PySpark, lineage size, trace times.

Workloads (Titian's evaluation, plus a PigMix L2/L6-style join and aggregate):
  grep       lines containing a mid-frequency word, collected
  wordcount  flatMap/map/reduceByKey over the words, collected
  join       page views summed per user, joined with users, summed per city (two shuffles + join)

Input text is generated once (Zipf over an 8,000-word vocabulary) under --data-dir. Each workload
runs plain and captured alternately, --runs times each after one warm-up run, in one Spark
application; the ratio is median(captured) / median(plain), for wall-clock time and for CPU time
(driver, JVM and Python workers, from /proc: the fair measure on a machine shared with other
work, where wall-clock ratios swing with the neighbours' load), and for the Python workers' peak
memory. Then, on the last captured run: the lineage bytes as a fraction of the input bytes, the
backward trace time of 1 and of 100 output records (to input ids, and fetching the raw lines of
the one record), the forward trace time of one input record.

    .venv/bin/python bench/record_capture.py                     # 64 MB, quick
    .venv/bin/python bench/record_capture.py --size-mb 1024      # headline figures
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import sys
from operator import add
from typing import Any

from _record_bench import Bench, add_worker_reuse_flag

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def zipf_vocabulary(size: int, seed: int) -> tuple[list[str], list[float]]:
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(LETTERS) for _ in range(rng.randint(2, 10))))
    vocabulary = sorted(words)
    rng.shuffle(vocabulary)
    cumulative = list(itertools.accumulate(1.0 / (rank + 1) for rank in range(size)))
    return vocabulary, cumulative


def generate_text(path: str, size_mb: float, vocabulary: list[str], cumulative: list[float], seed: int) -> None:
    """Lines of 5-15 Zipf words until the file holds ``size_mb`` MB."""
    rng = random.Random(seed)
    target = int(size_mb * 1_000_000)
    written = 0
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        while written < target:
            chunk = []
            for _ in range(10000):
                line = " ".join(rng.choices(vocabulary, cum_weights=cumulative, k=rng.randint(5, 15))) + "\n"
                chunk.append(line)
                written += len(line)
            out.write("".join(chunk))
    os.replace(tmp, path)


def generate_pigmix(folder: str, size_mb: float, seed: int) -> tuple[str, str]:
    """page_views (user, action, timespent, query_term, ip, timestamp, revenue) and users."""
    rng = random.Random(seed)
    views, users = os.path.join(folder, f"page_views-{size_mb:g}mb.txt"), os.path.join(folder, "users.txt")
    n_users = 50_000
    names = [f"user{i:06d}" for i in range(n_users)]
    cities = [f"city{i:03d}" for i in range(300)]
    if not os.path.exists(users):
        with open(users + ".tmp", "w") as out:
            for i, name in enumerate(names):
                if i % 5 == 4:
                    continue  # some users have no profile: their views drop out of the join
                out.write(f"{name}\t555-{i:07d}\t{i} main st\t{rng.choice(cities)}\tCA\t{90000 + i % 1000}\n")
        os.replace(users + ".tmp", users)
    if not os.path.exists(views):
        cumulative = list(itertools.accumulate(1.0 / (r + 1) ** 0.8 for r in range(n_users)))
        target, written = int(size_mb * 1_000_000), 0
        with open(views + ".tmp", "w") as out:
            while written < target:
                chunk = []
                for name in rng.choices(names, cum_weights=cumulative, k=10000):
                    line = (f"{name}\t{rng.randint(1, 5)}\t{rng.randint(1, 600)}\tterm{rng.randint(0, 9999)}\t"
                            f"10.0.{rng.randint(0, 255)}.{rng.randint(0, 255)}\t{rng.randint(1, 10**9)}\t"
                            f"{rng.random() * 100:.2f}\n")
                    chunk.append(line)
                    written += len(line)
                out.write("".join(chunk))
        os.replace(views + ".tmp", views)
    return views, users


def zipf_text(data_dir: str, size_mb: float, seed: int) -> tuple[str, list[str]]:
    """The Zipf text of ``size_mb`` under ``data_dir`` (generated once) and its vocabulary."""
    os.makedirs(data_dir, exist_ok=True)
    vocabulary, cumulative = zipf_vocabulary(8000, seed)
    text = os.path.join(data_dir, f"zipf-{size_mb:g}mb.txt")
    if not os.path.exists(text):
        print(f"generating {text} ...", flush=True)
        generate_text(text, size_mb, vocabulary, cumulative, seed)
    return text, vocabulary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=64.0, help="text input size (default 64)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each variant (default 3)")
    parser.add_argument("--data-dir", default=os.path.join(ROOT, "var", "bench"), help="generated inputs")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--workloads", default="grep,wordcount,join")
    parser.add_argument("--seed", type=int, default=7)
    add_worker_reuse_flag(parser)
    args = parser.parse_args()

    text, vocabulary = zipf_text(args.data_dir, args.size_mb, args.seed)
    text_bytes = os.path.getsize(text)
    bench = Bench(args)
    rng = random.Random(args.seed)
    workloads = args.workloads.split(",")
    try:
        print(f"input {text_bytes / 1e6:.0f} MB, master {args.master}, {args.runs} runs each")
        if "grep" in workloads:
            needle = vocabulary[200]
            lc, result = bench.compare(
                "grep", text_bytes,
                lambda: bench.sc.textFile(text).filter(lambda s: needle in s).collect(),
                lambda lc: (lambda r: (r.collect(), r))(lc.textFile(text).filter(lambda s: needle in s)))
            matches, rdd = result
            bench.trace_figures("grep", lc, rdd, lambda v: True, matches[: 100])
        if "wordcount" in workloads:
            lc, result = bench.compare(
                "wordcount", text_bytes,
                lambda: bench.sc.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add).collect(),
                lambda lc: (lambda r: (r.collect(), r))(
                    lc.textFile(text).flatMap(str.split).map(lambda w: (w, 1)).reduceByKey(add)))
            counts, rdd = result
            picked = rng.choice(counts)
            many = rng.sample(counts, min(100, len(counts)))
            bench.trace_figures("wordcount", lc, rdd, lambda v: v == picked, many)
        if "join" in workloads:
            views, users = generate_pigmix(args.data_dir, args.size_mb * 0.5, args.seed)
            join_bytes = os.path.getsize(views) + os.path.getsize(users)

            def pipeline(ctx: Any) -> Any:
                per_user = (ctx.textFile(views).map(lambda s: s.split("\t")).map(lambda f: (f[0], int(f[2])))
                            .reduceByKey(add))
                profiles = ctx.textFile(users).map(lambda s: s.split("\t")).map(lambda f: (f[0], f[3]))
                return per_user.join(profiles).map(lambda kv: (kv[1][1], kv[1][0])).reduceByKey(add)

            lc, result = bench.compare("join", join_bytes, lambda: pipeline(bench.sc).collect(),
                                       lambda lc: (lambda r: (r.collect(), r))(pipeline(lc)))
            totals, rdd = result
            bench.trace_figures("join", lc, rdd, lambda v: v == totals[0], rng.sample(totals, min(100, len(totals))))
        bench.summary()
    finally:
        bench.close()


if __name__ == "__main__":
    main()
