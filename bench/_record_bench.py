"""What the record-capture benchmarks share: timing, CPU and peak Python-worker memory of the whole
process tree (from /proc), and a Bench that runs plain and captured variants alternately in one
Spark application and prints their ratios.

The Python workers are not reused between tasks (``spark.python.worker.reuse=false``, unless
``--reuse-workers``), so neither variant starts a task in a worker the other one left. PySpark's
spill threshold (``spark.python.worker.memory``) counts the worker's whole resident memory: a
worker that ran a captured task (pyarrow loaded, Arrow's allocator) starts the next task 100-200
MB higher, and on the high-cardinality word count that alone made plain PySpark's map side spill
1.1 GB and run 3-5x slower than in a fresh worker. In one application mixing captured and plain
stages that is what happens; measured alternately, it would credit the capture with plain's loss.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _process_tree() -> dict[int, list[str]]:
    """{pid: fields of /proc/pid/stat after the name} of this process and all its descendants."""
    stats: dict[int, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        stats[int(entry)] = stat[stat.rfind(")") + 2:].split()
    tree = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, fields in stats.items():
            if int(fields[1]) in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return {pid: stats[pid] for pid in tree if pid in stats}


def _cpu_ticks(fields: list[str]) -> int:
    """A process's CPU time (user, system, and of the children it reaped) in clock ticks."""
    return sum(int(x) for x in fields[11:15])


def python_workers_pss(tree: dict[int, list[str]]) -> int:
    """Bytes of memory the Python workers of a process tree (``_process_tree``) hold now
    (proportional set size, so pages a forked worker shares with the daemon count once)."""
    total = 0
    for pid in tree:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read()
            if b"pyspark.daemon" not in cmdline and b"pyspark.worker" not in cmdline:
                continue
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            continue
    return total


class TreeSampler:
    """Samples this process tree every ``interval`` seconds while in use: ``peak``, the Python
    workers' peak memory in bytes, and ``cpu_seconds``, the CPU time the tree used meanwhile.

    The CPU time is each process's last sample less its first (0 for a process born meanwhile):
    PySpark's daemon ignores SIGCHLD, so a worker that exits (every task, without worker reuse) is
    reaped by the kernel and its time is in no parent's counters. What a worker uses in its last
    ``interval`` before exiting is missed (at most 50 ms a task, for both variants alike)."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak = 0
        self._start = {pid: _cpu_ticks(fields) for pid, fields in _process_tree().items()}
        self._last = dict(self._start)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            tree = _process_tree()
            self._last.update((pid, _cpu_ticks(fields)) for pid, fields in tree.items())
            self.peak = max(self.peak, python_workers_pss(tree))
            if self._stop.wait(self.interval):
                break
        self._last.update((pid, _cpu_ticks(fields)) for pid, fields in _process_tree().items())

    @property
    def cpu_seconds(self) -> float:
        used = sum(ticks - self._start.get(pid, 0) for pid, ticks in self._last.items())
        return used / os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def add_worker_reuse_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reuse-workers", action="store_true",
                        help="reuse Python workers between tasks (Spark's default; see bench/_record_bench.py)")


def measured(fn: Callable[[], Any]) -> tuple[float, float, int, Any]:
    """(wall seconds, CPU seconds of the whole process tree, peak Python-worker bytes, result)."""
    with TreeSampler() as sampler:
        wall, result = timed(fn)
    return wall, sampler.cpu_seconds, sampler.peak, result


def folder_bytes(path: str) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)


class Bench:
    def __init__(self, args: argparse.Namespace, conf: dict[str, str] | None = None) -> None:
        from pyspark.sql import SparkSession

        self.args = args
        builder = (SparkSession.builder.master(args.master).appName("record-capture-bench")
                   .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                   .config("spark.driver.memory", args.driver_memory))
        if not getattr(args, "reuse_workers", False):
            builder = builder.config("spark.python.worker.reuse", "false")
        for key, value in (conf or {}).items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
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
                captured: Callable[[Any], Any], warm_up: bool = True) -> tuple[Any, Any]:
        """Warm-up, then plain and captured runs alternately; returns the last (lc, captured result)."""
        runs = self.args.runs
        if warm_up:
            plain()
        plain_times: list[float] = []
        captured_times: list[float] = []
        plain_cpu: list[float] = []
        captured_cpu: list[float] = []
        plain_memory: list[int] = []
        captured_memory: list[int] = []
        lc: Any = None
        result: Any = None
        for _ in range(runs):
            t, cpu, peak, expected = measured(plain)
            plain_times.append(t)
            plain_cpu.append(cpu)
            plain_memory.append(peak)
            if lc is not None:
                shutil.rmtree(lc.run_dir, ignore_errors=True)
            lc = self.context()
            t, cpu, peak, result = measured(functools.partial(captured, lc))
            captured_times.append(t)
            captured_cpu.append(cpu)
            captured_memory.append(peak)
        got = result[0] if isinstance(result, tuple) else result
        same = sorted(map(repr, got)) == sorted(map(repr, expected)) if isinstance(expected, list) else got == expected
        assert same, f"{name}: captured results differ from plain PySpark"
        lineage = folder_bytes(lc.run_dir)
        row: dict[str, Any] = {"workload": name, "plain": statistics.median(plain_times),
               "captured": statistics.median(captured_times),
               "per_run": [c / p for p, c in zip(plain_times, captured_times, strict=True)],
               "lineage_mb": lineage / 1e6, "lineage_pct": 100.0 * lineage / input_bytes}
        row["ratio"] = row["captured"] / row["plain"]
        row["plain_cpu"], row["captured_cpu"] = statistics.median(plain_cpu), statistics.median(captured_cpu)
        row["cpu_ratio"] = row["captured_cpu"] / row["plain_cpu"]
        row["cpu_per_run"] = [c / p for p, c in zip(plain_cpu, captured_cpu, strict=True)]
        row["plain_mem_mb"], row["captured_mem_mb"] = max(plain_memory) / 1e6, max(captured_memory) / 1e6
        row["mem_ratio"] = row["captured_mem_mb"] / max(row["plain_mem_mb"], 1e-9)
        self.rows.append(row)
        print(f"\n== {name}: plain {row['plain']:.2f}s  captured {row['captured']:.2f}s  ratio {row['ratio']:.3f}"
              f"  (per run {', '.join(f'{r:.3f}' for r in row['per_run'])})")
        print(f"   CPU: plain {row['plain_cpu']:.1f}s  captured {row['captured_cpu']:.1f}s"
              f"  ratio {row['cpu_ratio']:.3f}  (per run {', '.join(f'{r:.3f}' for r in row['cpu_per_run'])})")
        print(f"   Python workers' peak memory: plain {row['plain_mem_mb']:.0f} MB  captured "
              f"{row['captured_mem_mb']:.0f} MB  ratio {row['mem_ratio']:.2f}")
        print(f"   lineage {row['lineage_mb']:.1f} MB = {row['lineage_pct']:.1f}% of {input_bytes / 1e6:.0f} MB input")
        return lc, result

    def summary(self) -> None:
        print("\nsummary (median of runs; ratio = captured / plain PySpark in the same application; memory: peak "
              "PSS of the Python workers)")
        for row in self.rows:
            traces = (f"  trace1 {row['trace_1']:.3f}s trace100 {row['trace_100']:.3f}s fwd1 {row['forward_1']:.3f}s"
                      if "trace_1" in row else "")
            cpu = f"cpu-ratio {row['cpu_ratio']:.3f} "
            print(f"  {row['workload']:10s} plain {row['plain']:7.2f}s captured {row['captured']:7.2f}s "
                  f"ratio {row['ratio']:.3f} {cpu}mem-ratio {row['mem_ratio']:.2f}  "
                  f"lineage {row['lineage_pct']:5.1f}% of input{traces}")

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
