"""Variants timed in Spark applications of their own, as a user's job has: what the DataFrame and
TPC-DS speed benches share.

In one JVM the JIT compiles Spark's shared methods (its column readers among them) for whichever
variant's queries came first, and the other then runs code compiled for another query; so each
variant runs in a process (a JVM) of its own, ``--rounds`` times, plain first in one round and
captured first in the next (``round_order``). A child process writes its result as pickles into
a file the parent names (``in_own_process``, ``write_result``): more than one when it writes as it
goes, so that what a child did before it died is still read. Each timed run starts on a settled
machine (``settle``).
"""

from __future__ import annotations

import math
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from typing import Any

VARIANTS = ("plain", "captured")


def round_order(round_: int) -> tuple[str, str]:
    """The order the two variants' applications run in, in round ``round_`` (from 0): plain first
    in even rounds, captured first in odd ones, so that neither always follows the other."""
    return VARIANTS if round_ % 2 == 0 else (VARIANTS[1], VARIANTS[0])


def settle(spark: Any, pause: float = 1.0) -> None:
    """Lets the last query's after-effects pass before the next is timed: a JVM garbage collection
    (Spark's ContextCleaner deletes the shuffle files of the queries collected), the files written
    flushed to disk, and a pause for both (seen here: TPC-H Q3 run right after another Q3 took up
    to a fifth longer without it)."""
    spark.sparkContext._jvm.System.gc()
    os.sync()
    time.sleep(pause)


def bench_session(app_name: str, master: str) -> Any:
    """A bench's driver SparkSession (6 GB of driver memory, no UI, errors only in the log)."""
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName(app_name)
             .config("spark.driver.memory", "6g").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def write_result(path: str, value: Any) -> None:
    """Appends ``value`` to the result file ``path`` of a child (``in_own_process`` reads them)."""
    with open(path, "ab") as out:
        pickle.dump(value, out)


def in_own_process(script: str, argv: list[str], check: bool = True) -> list[Any]:
    """Runs ``script`` with ``argv`` and ``--result FILE`` in a Python process of its own (its
    output passes through): what it wrote to FILE with ``write_result``, in order. ``check``: a
    child that exits non-zero raises; else what it wrote before it died is returned."""
    fd, path = tempfile.mkstemp(prefix="bench-result-", suffix=".pickle")
    os.close(fd)
    try:
        done = subprocess.run([sys.executable, os.path.abspath(script), *argv, "--result", path])
        if check and done.returncode:
            raise subprocess.CalledProcessError(done.returncode, [script, *argv])
        results = []
        with open(path, "rb") as stream:
            while True:
                try:
                    results.append(pickle.load(stream))
                except EOFError:
                    break
        return results
    finally:
        os.remove(path)


def geometric_mean(ratios: Iterable[float]) -> float:
    values = list(ratios)
    return math.exp(sum(math.log(r) for r in values) / len(values)) if values else float("nan")


def load() -> str:
    """The machine's load averages now (1, 5, 15 minutes), as ``uptime`` gives them."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f}, {five:.2f}, {fifteen:.2f}"
