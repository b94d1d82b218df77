"""A Spark standalone master and one worker on loopback, started from pip's pyspark (no download)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
START_TIMEOUT = 60.0


@dataclass(frozen=True)
class StandaloneCluster:
    """A running master (``url``) whose JSON status is at ``status_url``."""

    url: str
    status_url: str
    folder: Path

    def status(self) -> dict[str, Any]:
        with urllib.request.urlopen(self.status_url, timeout=5) as response:
            return json.load(response)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def standalone_cluster(folder: Path, cores: int = 1, memory: str = "1g") -> Iterator[StandaloneCluster]:
    """Start a master and a worker (logs and the worker's folder under ``folder``); always stop both."""
    folder.mkdir(parents=True, exist_ok=True)
    port, ui_port, worker_ui_port = free_port(), free_port(), free_port()
    env = {**os.environ, "SPARK_HOME": str(SPARK_HOME), "SPARK_LOCAL_IP": "127.0.0.1"}
    cluster = StandaloneCluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}/json/", folder)
    master = _daemon("master.Master", "--port", str(port), "--webui-port", str(ui_port))
    worker = _daemon("worker.Worker", cluster.url, "--webui-port", str(worker_ui_port), "--cores", str(cores))
    worker += ["--memory", memory, "--work-dir", str(folder / "work")]  # not under SPARK_HOME
    with ExitStack() as stack:
        procs = [stack.enter_context(_process(master, folder / "master.log", env))]
        procs.append(stack.enter_context(_process(worker, folder / "worker.log", env)))
        _wait_for_alive_worker(cluster, procs)
        yield cluster


def _daemon(main_class: str, *args: str) -> list[str]:
    """The spark-class command line of a standalone daemon bound to loopback."""
    return [
        str(SPARK_HOME / "bin" / "spark-class"),
        f"org.apache.spark.deploy.{main_class}",
        "--host",
        "127.0.0.1",
        *args,
    ]


@contextmanager
def _process(command: list[str], log: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A process in its own process group (the worker's executors join it), terminated on exit."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        yield proc
    finally:
        _stop_group(proc)


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue


def _wait_for_alive_worker(cluster: StandaloneCluster, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}; logs in {cluster.folder}")
        try:
            if any(w.get("state") == "ALIVE" for w in cluster.status().get("workers", [])):
                return
        except (OSError, urllib.error.URLError, ValueError):
            pass  # the master's web UI is not up yet
        time.sleep(0.5)
    raise TimeoutError(f"no ALIVE worker at {cluster.status_url} after {START_TIMEOUT:.0f}s; logs in {cluster.folder}")
