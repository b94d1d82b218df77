"""Lint and types run with the tests: the agent is ruff- and mypy-clean."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The options (disallow_untyped_defs for capture_agent.*) are in pyproject.toml.
MYPY = ["-m", "mypy", "capture_agent", "tests/capture_agent", "tests/test_import_graph.py"]


def check(*arguments: str) -> None:
    done = subprocess.run([sys.executable, *arguments], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]


def test_mypy_finds_nothing_in_the_agent() -> None:
    check(*MYPY)


def test_ruff_finds_nothing_in_the_agent() -> None:
    check("-m", "ruff", "check", "capture_agent", "tests/capture_agent", "tests/ingest_schema.py",
          "tests/test_packaging.py")
