"""Ingest under load: many simulated agents post to the real server (gunicorn + PostgreSQL) at once.

Creates and migrates the PostgreSQL database, starts gunicorn (``lineage_server.wsgi``) and a
Celery worker on a free loopback port, creates an agent token, then runs ``--agents`` agents
for ``--seconds``: each posts whole applications (start, jobs, stages with operators, Python
operators, datasets read from a shared pool and written, capture points, end) in batches of
1..40 events with the capture agent's own HTTP transport, re-sends some batches after they
succeeded (a lost response), overlaps some with their own retry (a timed-out request the server
still works on) and sends some together with the next batch (flush-spool racing the agent).
Then it waits until every accepted event is applied (visible in the catalog: a request answered
202 left its batch to the worker's applier), checks from the database that no event was lost or
stored twice and that each job, stage, operator, dataset IO and capture point exists exactly once
in its final state, and prints the events per second sustained from the first request until the
last event was applied, and the request latency. Exit status 1 when a check fails.

    .venv/bin/python bench/ingest_load.py [--agents 16] [--seconds 25] [--workers 2] [--threads 4]
        [--database-url postgres://postgres@127.0.0.1:5432/lineage_bench] [--broker filesystem://]
        [--reset] [--no-worker] [--resend 0.15] [--overlap 0.05] [--spool-race 0.05] [--openlineage-agents 0]

With ``--openlineage-agents N``, N of the agents are OpenLineage producers instead: each posts
workflows of 5-15 interleaved Spark, Airflow and dbt runs (tests/lineage_server/openlineage_events.py)
to ``/api/v1/lineage/batch``, re-sending as the others do, checked the same way.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from _ingest_server import ROOT, ensure_database, manage, running_server

sys.path.insert(0, str(ROOT))  # capture_agent's transport (the agents post with it) and lineage_server
from _ingest_agents import AgentStats, LoadProfile, SimulatedAgent
from _ingest_openlineage import OpenLineageAgent

if TYPE_CHECKING:
    from _ingest_checks import Check

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/lineage_bench"
SHARED_INPUTS = [f"file:/bench/warehouse/events/day=2026-11-{day:02d}" for day in range(1, 21)]


def main() -> int:
    args = _arguments()
    var = Path(tempfile.mkdtemp(prefix="lineage-ingest-load-"))
    env = {
        **os.environ,
        "DATABASE_URL": args.database_url,
        "LINEAGE_VAR_DIR": str(var),
        "DEBUG": "false",
        "LINEAGE_HTTPS": "false",  # plain http on loopback
        "CELERY_BROKER_URL": args.broker,
        "LINEAGE_TRACE_SPARK_AT_START": "false",  # no JVM starting in the worker while it is measured
    }
    ensure_database(args.database_url, args.reset)
    manage(env, "migrate", "--noinput", "-v", "0")
    token_file = manage(env, "ensure_local_setup", "--var", str(var)).splitlines()[-1]
    token = Path(token_file).read_text().strip()
    _setup_django(env)
    run_tag = uuid.uuid4().hex[:8]
    profile = LoadProfile(args.largest_batch, args.resend, args.overlap, args.spool_race)
    with running_server(env, var, args.workers, args.threads, celery=not args.no_worker) as server:
        kinds = [OpenLineageAgent if i < args.openlineage_agents else SimulatedAgent for i in range(args.agents)]
        agents = [kind(i, f"http://127.0.0.1:{server.port}", token, run_tag, profile) for i, kind in enumerate(kinds)]
        cpu_before = server.cpu_seconds()
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=args.agents) as pool:
            results = list(pool.map(lambda a: a.run(started + args.seconds, SHARED_INPUTS), agents))
        load_ended = time.monotonic()
        from _ingest_checks import check_catalog, wait_for_applied, wait_for_finalize  # needs Django set up

        if args.no_worker:  # nobody applies what the requests left: this process does
            from lineage_server.catalog.services import apply_accepted

            apply_accepted()
        wait_for_applied(timeout=120)
        elapsed = time.monotonic() - started  # until every event was applied
        applied_after = time.monotonic() - load_ended
        cpu = {kind: spent - cpu_before[kind] for kind, spent in server.cpu_seconds().items()}
        apps = [app for stats in results for app in stats.applications]
        finalized = sum(app.finalized for app in apps)
        waited = None if args.no_worker else wait_for_finalize(f"bench-{run_tag}-", finalized, timeout=120)
        checks = check_catalog(f"bench-{run_tag}-", apps, finalized=not args.no_worker)
    ok = _report(args, results, elapsed, applied_after, cpu, waited, checks)
    if ok:
        shutil.rmtree(var, ignore_errors=True)
    else:
        print(f"server logs kept in {var}")
    return 0 if ok else 1


def _report(args: argparse.Namespace, results: list[AgentStats], elapsed: float, applied_after: float,
            cpu: dict[str, float], waited: float | None, checks: list[Check]) -> bool:
    apps = [app for stats in results for app in stats.applications]
    distinct = sum(len(app.event_ids) for app in apps)
    requests = sum(s.requests for s in results)
    posted = sum(s.events_posted for s in results)
    resent = sum(s.resent_events for s in results)
    latencies = sorted(t for s in results for t in s.latencies)
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    errors: Counter[str] = sum((s.errors for s in results), start=Counter())
    mismatches = [m for s in results for m in s.mismatches]
    database = args.database_url.rsplit("/", 1)[-1]
    worker = "" if args.no_worker else f", a Celery worker finalizing (broker {args.broker.split(':')[0]})"
    kinds = f" ({args.openlineage_agents} of them OpenLineage producers)" if args.openlineage_agents else ""
    print(f"ingest load: {args.agents} agents{kinds} for {args.seconds:.0f} s against gunicorn {args.workers} "
          f"workers x {args.threads} threads, PostgreSQL database {database!r}{worker}")
    print(f"  applications       {len(apps)} ({sum(not app.finalized for app in apps)} OpenLineage runs)")
    print(f"  events applied     {distinct} in {elapsed:.1f} s = {distinct / elapsed:.0f} events/s sustained "
          f"(until the last was applied, {applied_after:.1f} s after the last answer)")
    print(f"  events posted      {posted} ({posted / elapsed:.0f}/s), {resent} of them re-sent "
          f"({sum(s.overlapping_resends for s in results)} batches overlapping their retry, "
          f"{sum(s.racing_batches for s in results)} pairs of batches racing)")
    statuses: Counter[int] = sum((s.answers for s in results), start=Counter())
    print(f"  requests           {requests} = {requests / elapsed:.0f} requests/s; {statuses[200]} answered 200 "
          f"(applied), {statuses[202]} 202 (accepted, left to the next round)")
    print(f"  latency / request  p50 {cuts[49] * 1000:.0f} ms, p95 {cuts[94] * 1000:.0f} ms, "
          f"p99 {cuts[98] * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
    # CPU per event does not depend on what else the machine runs, as the rate does.
    print(f"  server CPU / event {1000 * sum(cpu.values()) / distinct:.2f} ms ("
          + ", ".join(f"{kind} {1000 * spent / distinct:.2f}" for kind, spent in cpu.items())
          + "; PostgreSQL: all its processes)")
    print(f"  failed requests    {sum(errors.values())} (retried)")
    for error, n in errors.most_common(5):
        print(f"    {n} x {error}")
    if waited is not None:
        print(f"  finalized          {waited:.1f} s after the load ended")
    failed = sum(errors.values())
    # A request that failed (a timeout) may have applied its batch before failing (one transaction per
    # batch); its retry then counts those as duplicates. The totals are exact only without failures.
    accepted_off = sum(s.accepted for s in results) - distinct  # never more; fewer only after failures
    duplicates_off = resent - sum(s.duplicates for s in results)  # never fewer; more only after failures
    answers = [
        ("answers: accepted == distinct events sent", max(accepted_off, 0 if failed else -accepted_off)),
        ("answers: duplicates == events re-sent", max(duplicates_off, 0 if failed else -duplicates_off)),
        ("answers as expected for each batch", len(mismatches)),
    ]
    print("checks")
    ok = True
    for name, failures in answers:
        ok &= failures == 0
        print(f"  {'ok  ' if failures == 0 else 'FAIL'} {name}: {failures} off")
    if mismatches:
        print("    e.g. " + mismatches[0])
    for check in checks:
        ok &= check.ok
        print(f"  {'ok  ' if check.ok else 'FAIL'} {check.name}: {check.failures}")
        if check.example:
            print(f"    e.g. {check.example}")
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    return ok


def _setup_django(env: dict[str, str]) -> None:
    """Django in this process, on the benchmark's database, for the checks."""
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "LINEAGE_VAR_DIR", "CELERY_BROKER_URL")})
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lineage_server.settings")
    import django

    django.setup()


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=16, help="concurrent simulated agents (1..128)")
    parser.add_argument("--seconds", type=float, default=25.0, help="how long agents start new applications")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="threads per gunicorn worker")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL") or DEFAULT_DATABASE)
    parser.add_argument("--broker", default=os.environ.get("CELERY_BROKER_URL") or "filesystem://",
                        help="Celery broker URL, e.g. redis://127.0.0.1:6379/15 (default: filesystem:// in a temp dir)")
    parser.add_argument("--reset", action="store_true", help="drop and recreate the database first")
    parser.add_argument("--no-worker", action="store_true", help="no Celery worker (applications stay unfinalized)")
    parser.add_argument("--openlineage-agents", type=int, default=0,
                        help="how many of the agents are OpenLineage producers posting to /api/v1/lineage/batch")
    parser.add_argument("--largest-batch", type=int, default=40, help="events per batch: 1..N")
    parser.add_argument("--resend", type=float, default=0.15, help="share of batches sent again after success")
    parser.add_argument("--overlap", type=float, default=0.05, help="share of batches overlapping their retry")
    parser.add_argument("--spool-race", type=float, default=0.05,
                        help="share of batches sent together with the next one (flush-spool racing the agent)")
    args = parser.parse_args()
    if not 1 <= args.agents <= 128 or not 1 <= args.seconds <= 3600:
        parser.error("--agents must be 1..128 and --seconds 1..3600")
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        parser.error("--database-url must be a PostgreSQL URL")
    return args


if __name__ == "__main__":
    sys.exit(main())
