"""Command line: ``python -m capture_agent flush-spool``, ``run`` and ``install-hook``."""

from __future__ import annotations

import argparse
import logging
import os
import runpy
import sys
import time

from capture_agent.autoenable import install_auto_enable
from capture_agent.config import ConfigError, load_settings
from capture_agent.sinks.http import deliver_spool
from capture_agent.spool import Spool
from capture_agent.transport import make_poster


def flush_spool(args: argparse.Namespace) -> int:
    overrides = {key: value for key, value in (
        ("server_url", args.server), ("token", args.token), ("spool_dir", args.spool_dir),
        ("timeout", args.timeout)) if value is not None}
    try:
        settings = load_settings(overrides)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    spool = Spool(settings.spool_dir, settings.spool_max_bytes)
    poster = make_poster(settings.ingest_url, settings.token, settings.timeout)
    deadline = time.monotonic() + args.max_seconds if args.max_seconds else None
    report = deliver_spool(spool, poster, deadline)
    if report.busy:
        print(f"another process is delivering {spool.directory}; "
              f"{report.batches_remaining} batches waiting")
        return 1
    print(f"delivered {report.events_delivered} events in {report.batches_delivered} batches "
          f"to {settings.ingest_url} ({report.duplicates} duplicates); "
          f"{report.batches_rejected} batches rejected, {report.batches_remaining} remaining")
    if report.last_error:
        print(f"stopped: server unreachable ({report.last_error})", file=sys.stderr)
        return 1
    return 0


def run_script(args: argparse.Namespace) -> int:
    # As a keyword argument: `run` asks for capture even when the config file says enabled=false.
    os.environ["LINEAGE_ENABLED"] = "true"
    install_auto_enable({"enabled": True})
    sys.argv = [args.script, *args.args]
    runpy.run_path(args.script, run_name="__main__")
    return 0


def install_hook(args: argparse.Namespace) -> int:
    from capture_agent.submit_hook import install

    pth = install()
    print(f"wrote {pth}: spark-submit drivers of this Python start the agent when LINEAGE_ENABLED "
          "or LINEAGE_RECORDS is true")
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    parser = argparse.ArgumentParser(prog="python -m capture_agent")
    commands = parser.add_subparsers(dest="command", required=True)
    flush = commands.add_parser("flush-spool", help="deliver spooled event batches")
    flush.add_argument("--server", help="server URL (default: LINEAGE_SERVER_URL)")
    flush.add_argument("--token", help="agent token (default: LINEAGE_TOKEN)")
    flush.add_argument("--spool-dir", help="spool folder (default: LINEAGE_SPOOL_DIR)")
    flush.add_argument("--timeout", type=float, help="seconds per request")
    flush.add_argument("--max-seconds", type=float, default=0.0, help="stop after this long")
    flush.set_defaults(handler=flush_spool)
    run = commands.add_parser("run", help="run a PySpark script with the agent enabled")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    run.set_defaults(handler=run_script)
    hook = commands.add_parser("install-hook", help="start the agent in spark-submit drivers of this Python "
                               "when LINEAGE_ENABLED or LINEAGE_RECORDS is true")
    hook.set_defaults(handler=install_hook)
    args = parser.parse_args(argv)
    return int(args.handler(args))
