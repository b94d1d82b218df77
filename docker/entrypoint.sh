#!/bin/sh
# Entrypoint of the lineage server image (docker/Dockerfile).
#
# Role: CONTAINER_ROLE (web | worker | spark | none), else guessed from the command: gunicorn is the
# web role, celery the worker role, anything else (spark-class, manage.py, a shell) none.
#   web:    wait for the database, apply migrations, then run the command.
#   worker: wait for the database, then run the command (the web container migrates).
#   other:  run the command as is.
# DB_WAIT_TIMEOUT (seconds, default 60) bounds the wait for the database; APP_DIR (/app) holds
# manage.py.
set -eu

role="${CONTAINER_ROLE:-}"
if [ -z "$role" ]; then
    case "${1:-}" in
        gunicorn) role=web ;;
        celery) role=worker ;;
        *) role=none ;;
    esac
fi

wait_for_database() {
    python - <<'PY'
import os
import sys
import time

import django

django.setup()
from django.db import connection
from django.db.utils import OperationalError

timeout = float(os.environ.get("DB_WAIT_TIMEOUT", "60"))
deadline = time.monotonic() + timeout
while True:
    try:
        connection.ensure_connection()
        break
    except OperationalError as exc:
        if time.monotonic() >= deadline:
            print(f"entrypoint: the database did not answer within {timeout:g}s: {exc}", file=sys.stderr)
            sys.exit(1)
        print("entrypoint: waiting for the database...", file=sys.stderr)
        time.sleep(2)
connection.close()
PY
}

case "$role" in
    web)
        wait_for_database
        python "${APP_DIR:-/app}/manage.py" migrate --noinput
        ;;
    worker)
        wait_for_database
        ;;
    spark|none)
        ;;
    *)
        echo "entrypoint: unknown CONTAINER_ROLE '$role' (web, worker, spark or none)" >&2
        exit 2
        ;;
esac

exec "$@"
