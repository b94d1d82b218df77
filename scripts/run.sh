#!/usr/bin/env bash
# `make run`: migrate, start the web server and a Celery worker on the embedded defaults, run the
# example PySpark job with the capture agent, print where to browse its lineage, and keep serving
# until Ctrl-C, which stops everything this script started.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="$PWD/.venv/bin/python"
PORT="${LINEAGE_PORT:-8000}"
VAR="${LINEAGE_VAR_DIR:-var}"
mkdir -p "$VAR/log"
# The server, the worker and the example job share one lineage store, under $VAR as everything else.
export LINEAGE_STORE="${LINEAGE_STORE:-$(cd "$VAR" && pwd)/lineage}"
export PYSPARK_PYTHON="$PY" PYSPARK_DRIVER_PYTHON="$PY"

# The install's secret key first, so that every process below (and the web server and worker) signs with it.
[[ -n "${SECRET_KEY:-}" ]] || "$PY" -c "import pathlib, sys; from lineage_server.secret_key import write_secret_key
write_secret_key(pathlib.Path(sys.argv[1]))" "$VAR"
"$PY" manage.py migrate --noinput -v 0
"$PY" manage.py collectstatic --noinput -v 0
# A team 'default', a superuser 'admin' who administers it, one of its agent tokens (kept in var/), and,
# unless SECRET_KEY is set, var/secret_key: written before the web server and worker start, so they share it.
{ read -r PASSWORD_FILE; read -r TOKEN_FILE; } < <("$PY" manage.py ensure_local_setup --var "$VAR")
# Plain http on loopback: no https redirect, cookies without the Secure flag.
export LINEAGE_HTTPS="${LINEAGE_HTTPS:-false}"

if "$PY" -c "import socket,sys; s=socket.socket(); sys.exit(s.connect_ex(('127.0.0.1', $PORT)) != 0)"; then
  echo "Port $PORT is in use (another 'make run'?). Stop it, or choose another port: LINEAGE_PORT=8001 make run" >&2
  exit 1
fi

pids=()
stop() {
  trap - INT TERM EXIT
  echo; echo "Stopping the web server and the worker..."
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop INT TERM EXIT

"$PY" -m gunicorn lineage_server.wsgi --bind "127.0.0.1:$PORT" --workers 2 --threads 4 --no-control-socket \
  --access-logfile "$VAR/log/web-access.log" --error-logfile "$VAR/log/web.log" &
pids+=($!)
# A worker that ends itself to stop a trace step it could not interrupt (exit code 75, see
# lineage_server/tracing/services/watch.py) is started again; any other exit ends the loop. The
# worker's own warnings (root user, its warm Spark session's JVM) go to its log, not the console.
(
  trap 'kill -TERM "$worker" 2>/dev/null; wait "$worker" || true; exit 0' INT TERM
  while :; do
    "$PY" -m celery --quiet -A lineage_server worker --loglevel INFO --logfile "$VAR/log/worker.log" \
      >>"$VAR/log/worker.log" 2>&1 &
    worker=$!
    code=0; wait "$worker" || code=$?
    [[ $code == 75 ]] || exit "$code"
    echo "run.sh: the worker ended itself to stop a trace step; starting a fresh one" >> "$VAR/log/worker.log"
  done
) &
pids+=($!)

for _ in $(seq 60); do
  "$PY" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/login/', timeout=2)" \
    2>/dev/null && break
  sleep 0.5
done

echo "Web server on http://127.0.0.1:$PORT/ (API docs: http://127.0.0.1:$PORT/api/docs/); worker started."
if [[ -f "$PASSWORD_FILE" ]]; then
  echo "Log in as admin with the password in $PASSWORD_FILE"
else
  echo "Log in as admin (its password was set before; reset it with: $PY manage.py changepassword admin)"
fi
echo "Running the example job (examples/word_count_join.py) with the capture agent (its Spark log: $VAR/log/example.log)..."
# Spark's start-up lines and warnings go to the example's log; its own lines to the console.
if ! LINEAGE_SERVER_URL="http://127.0.0.1:$PORT" LINEAGE_TOKEN="$(cat "$TOKEN_FILE")" \
  "$PY" examples/word_count_join.py --out "$VAR/example" 2>"$VAR/log/example.log" | tee "$VAR/log/example.out"; then
  echo "The example job failed; the end of $VAR/log/example.log:" >&2
  tail -n 20 "$VAR/log/example.log" >&2
  exit 1
fi
APP_ID="$(sed -n 's/^Application id: //p' "$VAR/log/example.out")"

echo
echo "Tracing one output record back to the input lines behind it, through the worker..."
"$PY" manage.py trace "$APP_ID" --user admin --direction backward --name "example: where 'incident' came from" \
  --predicate '{"field": 0, "op": "equals", "value": "incident"}' --base-url "http://127.0.0.1:$PORT" \
  || echo "The trace did not finish; see $VAR/log/worker.log" >&2

echo
echo "Browse the example job's lineage at the URL above. Logs: $VAR/log/ (web.log, worker.log, example.log)."
echo "Press Ctrl-C to stop."
wait
