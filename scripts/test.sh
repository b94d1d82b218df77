#!/usr/bin/env bash
# The whole Python suite on the embedded defaults; then, when PostgreSQL and Redis answer on
# loopback (as on CI's machines), the server and agent-to-server tests again against them.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export PYSPARK_PYTHON="$PWD/$PY"

echo "== lint and types (ruff, mypy) =="
bash scripts/lint.sh

services_up() {  # ports answering on loopback
  "$PY" - "$@" <<'PY'
import socket, sys
for port in sys.argv[1:]:
    try:
        socket.create_connection(("127.0.0.1", int(port)), timeout=1).close()
    except OSError:
        sys.exit(1)
PY
}

if [[ -z "${DATABASE_URL:-}" ]] && services_up 5432 6379; then
  echo "== server tests against PostgreSQL and Redis =="
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/lineage CELERY_BROKER_URL=redis://127.0.0.1:6379/5 \
    "$PY" -m pytest tests/lineage_server tests/integration/test_restarts.py -q -p no:randomly
  if services_up 5432 5672; then
    echo "== the worker with RabbitMQ as the broker =="
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/lineage CELERY_BROKER_URL=amqp://guest:guest@127.0.0.1:5672// \
      "$PY" -m pytest tests/lineage_server/test_worker.py tests/integration/test_restarts.py -q -p no:randomly \
      -k "worker or requeue"
  fi
fi
echo "== full suite on the embedded defaults =="
exec "$PY" -m pytest -q
