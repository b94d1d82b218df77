"""Loaded as a pytest plugin (``-p tests._env``) so it runs before Django reads its settings.

It points LINEAGE_VAR_DIR at a fresh temporary folder, keeping the test database and the Celery
broker folder out of the developer's var/, and gives the session (and the workers and servers it
starts) one secret key, as `make run`'s var/secret_key does.
"""
from __future__ import annotations

import os
import re
import secrets
import tempfile

os.environ.setdefault("LINEAGE_VAR_DIR", tempfile.mkdtemp(prefix="lineage-test-var-"))
# Under pytest-xdist each worker process (which inherits the folder above from the controller) takes
# a folder of its own inside it: its own SQLite test database and embedded broker, whose queue another
# worker's Celery workers would otherwise read.
# The same holds for a Redis broker (CI's services pass): each worker process takes the next database
# number after the one given, as pytest-django gives each a PostgreSQL test database of its own.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["LINEAGE_VAR_DIR"] = os.path.join(os.environ["LINEAGE_VAR_DIR"], os.environ["PYTEST_XDIST_WORKER"])
    broker = re.fullmatch(r"(redis://[^/]*/)(\d+)", os.environ.get("CELERY_BROKER_URL", ""))
    if broker:
        worker_number = int(os.environ["PYTEST_XDIST_WORKER"].removeprefix("gw"))
        os.environ["CELERY_BROKER_URL"] = f"{broker[1]}{int(broker[2]) + worker_number}"
# Where `collectstatic` would have put the frontend (the tests serve it from frontend/dist).
os.makedirs(os.path.join(os.environ["LINEAGE_VAR_DIR"], "static"), exist_ok=True)
os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
# The live test servers speak plain http on loopback, like `make run`.
os.environ.setdefault("LINEAGE_HTTPS", "false")
# The JVMs the tests start for a job or two (spark-submit drivers, the workers' Spark; the session's own
# takes the same, tests/spark_fixtures.py) share two cores: the client compiler only and the serial
# collector leave their CPU to the tests (a small Spark job's process took 22-26 s instead of 29-48 s on a
# loaded machine).
# Every JVM the tests start, the session's own too, maps Spark's classes from one archive
# (tests/jvm_classes.py), made by the first process of the first session that finds none.
if "LINEAGE_TESTS_JVM_SHARING" not in os.environ:
    from tests.jvm_classes import archive_options

    os.environ["LINEAGE_TESTS_JVM_SHARING"] = archive_options()
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"  # the client compiler only, the serial collector
os.environ.setdefault("SPARK_SUBMIT_OPTS", f"{JVM_OPTIONS} {os.environ['LINEAGE_TESTS_JVM_SHARING']}".strip())
