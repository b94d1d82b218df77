#!/usr/bin/env bash
# Lint and types, run by `make test` before the tests: ruff on the whole checkout, mypy (with the
# Django and DRF plugins) on what pyproject.toml's [tool.mypy] `files` lists (both packages, tests,
# bench, examples).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

"$PY" -m ruff check .
# mypy's Django plugin imports the settings: give it a key so it does not log that it made a temporary one.
SECRET_KEY="${SECRET_KEY:-mypy-only-not-a-secret}" "$PY" -m mypy
