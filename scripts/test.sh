#!/usr/bin/env bash
# The whole Python suite on the embedded defaults (SQLite, the broker kept in files) in
# TEST_PROCESSES pytest-xdist processes, with lint and types and the frontend's tests beside it.
# When PostgreSQL and Redis answer on loopback (as on CI's machines), the server's tests that run no
# Spark run against them instead, beside the embedded pass (which keeps every Spark test, and runs
# the server's Spark tests that are about the backends there too), and the worker's against
# RabbitMQ when it answers.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
export PYSPARK_PYTHON="$PWD/$PY"
# Two processes on CI's two cores: most of a Spark or worker test's time is spent waiting (on a JVM,
# a worker process, a live server), so the second process and the services pass fill it.
TEST_PROCESSES="${TEST_PROCESSES:-2}"
# The services of the second pass (a PostgreSQL database the tests' own is named after, Redis db 5).
TEST_POSTGRES_URL="${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/lineage}"
TEST_REDIS_URL="${TEST_REDIS_URL:-redis://127.0.0.1:6379/5}"
TEST_AMQP_URL="${TEST_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672//}"

# Every process the tests start reads the project's modules compiled once (PYTHONDONTWRITEBYTECODE
# may be set, as on CI's machines).
"$PY" -m compileall -q capture_agent lineage_server tests bench >/dev/null
# Each stage says what it took (wall seconds; stages beside each other share the two cores).
timed() {  # timed NAME COMMAND...: runs COMMAND, then prints how long NAME took
  local name="$1" start=$SECONDS status=0
  shift
  "$@" || status=$?
  echo "[stage] $name: $((SECONDS - start)) s"
  return "$status"
}
# Lint and types, and the frontend's tests, run beside the Python tests (their output follows theirs).
lint_log="$(mktemp -t lineage-lint.XXXXXX)"
timed "lint and types" bash scripts/lint.sh >"$lint_log" 2>&1 &
lint_pid=$!
frontend_log="$(mktemp -t lineage-frontend.XXXXXX)"
(cd frontend && timed "frontend tests (npm test)" npm test) >"$frontend_log" 2>&1 &
frontend_pid=$!

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

# The server tests against the services: every test of the server but its Spark tests, which check
# Spark's answers and run once, in the embedded pass; of those, the ones marked `backends` (a worker
# killed, a task redelivered, a trace through the broker) run here too. Two processes, each with a
# PostgreSQL test database and a Redis database of its own (tests/_env.py).
SERVER_TESTS=(tests/lineage_server tests/integration/test_restarts.py)
# pytest-xdist hands out whole modules, the modules with the most tests first (its default).
DIST=(--dist loadfile)
services_pass() {
  echo "== server tests against PostgreSQL and Redis =="
  DATABASE_URL="$TEST_POSTGRES_URL" CELERY_BROKER_URL="$TEST_REDIS_URL" timed "server tests on PostgreSQL and Redis" \
    "$PY" -m pytest "${SERVER_TESTS[@]}" -q -n 2 "${DIST[@]}" -m "not spark or backends" --durations=10
  if services_up 5432 5672; then
    echo "== the worker with RabbitMQ as the broker =="
    DATABASE_URL="$TEST_POSTGRES_URL" CELERY_BROKER_URL="$TEST_AMQP_URL" timed "worker tests on RabbitMQ" \
      "$PY" -m pytest tests/lineage_server/test_worker.py tests/integration/test_restarts.py -q \
      -k "worker or requeue" --durations=5
  fi
}

services_pid=""
if [[ -z "${DATABASE_URL:-}" ]] && services_up 5432 6379; then
  services_log="$(mktemp -t lineage-services-tests.XXXXXX)"
  services_pass >"$services_log" 2>&1 &
  services_pid=$!
  # The server's tests without Spark run once, there; the embedded pass keeps every Spark test.
  export LINEAGE_TESTS_SERVER_ELSEWHERE="${SERVER_TESTS[*]}"
  echo "(the server tests against PostgreSQL and Redis run beside this pass; their output follows it)"
fi

echo "== full suite on the embedded defaults =="
status=0
timed "full suite on the embedded defaults" "$PY" -m pytest -q -n "$TEST_PROCESSES" "${DIST[@]}" --durations=20 \
  || status=$?
echo "== frontend tests (npm test) =="
# node's summary when they pass, everything when they do not
if wait "$frontend_pid"; then tail -n 10 "$frontend_log"; else status=1; cat "$frontend_log"; fi
echo "== lint and types (ruff, mypy) =="
wait "$lint_pid" || status=$?
cat "$lint_log"
rm -f "$lint_log" "$frontend_log"
if [[ -n "$services_pid" ]]; then
  wait "$services_pid" || status=$?
  cat "$services_log"
  rm -f "$services_log"
fi
exit "$status"
