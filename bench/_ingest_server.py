"""The real server for the load test: a PostgreSQL database, gunicorn and a Celery worker, on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ensure_database(url: str, reset: bool) -> None:
    """Create the URL's PostgreSQL database when missing (dropped first with ``reset``)."""
    import psycopg
    from psycopg import sql

    parts = urllib.parse.urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urllib.parse.urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if reset:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def manage(env: dict[str, str], *args: str) -> str:
    """Run ``manage.py`` with ``env``; returns its output."""
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class RunningServer:
    """The port gunicorn serves on, and the sessions of the processes started (gunicorn's, the worker's)."""

    port: int
    sessions: dict[str, int]

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time (user + system) so far of gunicorn's processes, the worker's, and every PostgreSQL process."""
        totals = dict.fromkeys([*self.sessions, "postgres"], 0.0)
        ticks = os.sysconf("SC_CLK_TCK")
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            name, fields = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()
            cpu = (int(fields[11]) + int(fields[12])) / ticks
            owner = next((kind for kind, session in self.sessions.items() if int(fields[3]) == session), None)
            if owner is None and name == "postgres":
                owner = "postgres"
            if owner is not None:
                totals[owner] += cpu
        return totals


@contextmanager
def running_server(env: dict[str, str], logs: Path, workers: int, threads: int,
                   celery: bool) -> Iterator[RunningServer]:
    """Serve ``lineage_server.wsgi`` with gunicorn (and a Celery worker) until the block ends."""
    port = free_port()
    web = [sys.executable, "-m", "gunicorn", "lineage_server.wsgi", "--bind", f"127.0.0.1:{port}",
           "--workers", str(workers), "--threads", str(threads), "--no-control-socket",
           "--error-logfile", str(logs / "web.log")]
    worker = [sys.executable, "-m", "celery", "--quiet", "-A", "lineage_server", "worker", "--pool", "solo",
              "--loglevel", "WARNING", "--logfile", str(logs / "worker.log")]
    with ExitStack() as stack:
        sessions = {"gunicorn": stack.enter_context(_process(web, logs / "web.out", env)).pid}
        if celery:
            sessions["worker"] = stack.enter_context(_process(worker, logs / "worker.out", env)).pid
        _wait_until_up(f"http://127.0.0.1:{port}/healthz", logs)
        yield RunningServer(port, sessions)


@contextmanager
def _process(command: list[str], out: Path, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    with out.open("wb") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        yield proc
    finally:
        for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
                proc.wait(wait)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue


def _wait_until_up(url: str, logs: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (OSError, urllib.error.URLError):
            time.sleep(0.3)
    raise RuntimeError(f"the server did not answer {url} within {timeout:.0f}s; see {logs}")
