"""Record-level lineage capture: overhead against plain PySpark, lineage size, trace times.

Workloads (Titian's evaluation, plus a PigMix L2/L6-style join and aggregate):
  grep       lines containing a mid-frequency word, collected
  wordcount  flatMap/map/reduceByKey over the words, collected
  join       page views summed per user, joined with users, summed per city (two shuffles + join)

Input text is generated once (Zipf over an 8,000-word vocabulary) under --data-dir. Each workload
runs plain and captured alternately, --runs times each after one warm-up run, in one Spark
application; the ratio is median(captured) / median(plain), for wall-clock time and for CPU time
(driver, JVM and Python workers, from /proc: the fair measure on a machine shared with other
work, where wall-clock ratios swing with the neighbours' load). Then, on the last captured run: the
lineage bytes as a fraction of the input bytes, the backward trace time of 1 and of 100 output
records (to input ids, and fetching the raw lines of the one record), the forward trace time of
one input record.

    .venv/bin/python bench/record_capture.py                     # 64 MB, quick
    .venv/bin/python bench/record_capture.py --size-mb 1024      # headline figures
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from operator import add
from typing import Any

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


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def tree_cpu_seconds() -> float:
    """CPU seconds used so far by this process and all its descendants (JVM, Python workers):
    each live process's own time plus the time of the children it has reaped."""
    parents: dict[int, int] = {}
    used: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        parents[int(entry)] = int(fields[1])
        used[int(entry)] = sum(int(x) for x in fields[11:15])
    tree = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return sum(used.get(pid, 0) for pid in tree) / os.sysconf("SC_CLK_TCK")


def measured(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of the whole process tree, result)."""
    cpu = tree_cpu_seconds()
    wall, result = timed(fn)
    return wall, tree_cpu_seconds() - cpu, result


def folder_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        from pyspark.sql import SparkSession

        self.args = args
        self.spark = (SparkSession.builder.master(args.master).appName("record-capture-bench")
                      .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                      .config("spark.driver.memory", args.driver_memory).getOrCreate())
        self.sc = self.spark.sparkContext
        self.sc.setLogLevel("ERROR")
        self.store = tempfile.mkdtemp(prefix="lineage-bench-")
        self.rows: list[dict[str, Any]] = []

    def close(self) -> None:
        shutil.rmtree(self.store, ignore_errors=True)
        self.spark.stop()

    def context(self) -> Any:
        from capture_agent.record import LineageContext

        return LineageContext(self.sc, store=self.store)

    def compare(self, name: str, input_bytes: int, plain: Callable[[], Any],
                captured: Callable[[Any], Any]) -> tuple[Any, Any]:
        """Warm-up, then plain and captured runs alternately; returns the last (lc, captured result)."""
        runs = self.args.runs
        plain()
        plain_times: list[float] = []
        captured_times: list[float] = []
        plain_cpu: list[float] = []
        captured_cpu: list[float] = []
        lc: Any = None
        result: Any = None
        for _ in range(runs):
            t, cpu, expected = measured(plain)
            plain_times.append(t)
            plain_cpu.append(cpu)
            if lc is not None:
                shutil.rmtree(lc.run_dir, ignore_errors=True)
            lc = self.context()
            t, cpu, result = measured(functools.partial(captured, lc))
            captured_times.append(t)
            captured_cpu.append(cpu)
        assert sorted(map(repr, result[0] if isinstance(result, tuple) else result)) == sorted(
            map(repr, expected)), f"{name}: captured results differ from plain PySpark"
        lineage = folder_bytes(lc.run_dir)
        row: dict[str, Any] = {"workload": name, "plain": statistics.median(plain_times),
               "captured": statistics.median(captured_times),
               "per_run": [c / p for p, c in zip(plain_times, captured_times, strict=True)],
               "lineage_mb": lineage / 1e6, "lineage_pct": 100.0 * lineage / input_bytes}
        row["ratio"] = row["captured"] / row["plain"]
        row["plain_cpu"], row["captured_cpu"] = statistics.median(plain_cpu), statistics.median(captured_cpu)
        row["cpu_ratio"] = row["captured_cpu"] / row["plain_cpu"]
        row["cpu_per_run"] = [c / p for p, c in zip(plain_cpu, captured_cpu, strict=True)]
        self.rows.append(row)
        print(f"\n== {name}: plain {row['plain']:.2f}s  captured {row['captured']:.2f}s  ratio {row['ratio']:.3f}"
              f"  (per run {', '.join(f'{r:.3f}' for r in row['per_run'])})")
        print(f"   CPU: plain {row['plain_cpu']:.1f}s  captured {row['captured_cpu']:.1f}s"
              f"  ratio {row['cpu_ratio']:.3f}  (per run {', '.join(f'{r:.3f}' for r in row['cpu_per_run'])})")
        print(f"   lineage {row['lineage_mb']:.1f} MB = {row['lineage_pct']:.1f}% of {input_bytes / 1e6:.0f} MB input")
        return lc, result

    def trace_figures(self, name: str, lc: Any, rdd: Any, pick: Callable[[Any], Any], many: list[Any]) -> None:
        """Backward trace of 1 and len(many) output records, forward of one input record."""
        lin = rdd.getLineage()
        outputs = lin.items()
        chosen = [record_id for record_id, value in outputs if pick(value)][:1]
        chosen_many = [record_id for record_id, value in outputs if value in many]
        point = lin.points()[0]
        t1, n1 = timed(lambda: lc.lineage(point, chosen).goBackAll().count())
        src = lc.lineage(point, chosen).goBackAll()
        t_fetch, lines = timed(lambda: src.collect())
        t100, n100 = timed(lambda: lc.lineage(point, chosen_many).goBackAll().count())
        input_point, first_id = src.points()[0], src.ids()[0]
        fwd = lc.lineage(input_point, [first_id])
        fwd._scope = lin._scope
        tf, nf = timed(lambda: fwd.goNextAll().count())
        print(f"   backward trace, 1 output record: {t1:.3f}s -> {n1} input lines; fetching them: {t_fetch:.3f}s"
              f" ({len(lines)} lines)")
        print(f"   backward trace, {len(chosen_many)} output records: {t100:.3f}s -> {n100} input lines")
        print(f"   forward trace, 1 input record: {tf:.3f}s -> {nf} output records")
        self.rows[-1].update(trace_1=t1, trace_1_lines=n1, fetch_1=t_fetch, trace_100=t100, trace_100_lines=n100,
                             forward_1=tf)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=64.0, help="text input size (default 64)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each variant (default 3)")
    parser.add_argument("--data-dir", default=os.path.join(ROOT, "var", "bench"), help="generated inputs")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument("--workloads", default="grep,wordcount,join")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    os.makedirs(args.data_dir, exist_ok=True)
    vocabulary, cumulative = zipf_vocabulary(8000, args.seed)
    text = os.path.join(args.data_dir, f"zipf-{args.size_mb:g}mb.txt")
    if not os.path.exists(text):
        print(f"generating {text} ...", flush=True)
        generate_text(text, args.size_mb, vocabulary, cumulative, args.seed)
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
        print("\nsummary (median of runs; ratio = captured / plain PySpark in the same application)")
        for row in bench.rows:
            print(f"  {row['workload']:10s} plain {row['plain']:7.2f}s captured {row['captured']:7.2f}s "
                  f"ratio {row['ratio']:.3f} cpu-ratio {row['cpu_ratio']:.3f}  "
                  f"lineage {row['lineage_pct']:5.1f}% of input  "
                  f"trace1 {row.get('trace_1', 0):.3f}s trace100 {row.get('trace_100', 0):.3f}s "
                  f"fwd1 {row.get('forward_1', 0):.3f}s")
    finally:
        bench.close()


if __name__ == "__main__":
    main()
