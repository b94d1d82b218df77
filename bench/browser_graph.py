"""The application page at scale, in headless Chromium: how long a big application takes to open
at its readable level, and to zoom.

A synthetic application (``--jobs`` x ``--stages`` x ``--ops`` operators, a chain of shuffles, one
dataset read per job and one written) is posted through the ingest API of a real server (gunicorn,
SQLite in a temporary folder); the page is opened as the local admin, in Debian's chromium. Printed:

- ``api``: the graph API's answer time, as the page's fetch saw it;
- ``open``: from navigation start until the page is ready with its graph laid out and drawn; each
  run's line also says when the document was ready, the graph asked for (the page preloads it) and
  answered, read (parsed) and handed to Cytoscape, whose first frame paints it;
- ``zoom in`` / ``zoom out``: one stage opened and closed again (its operators drawn or hidden);
- ``level``: each level button, from its click until the new level is drawn.

Each action starts on a settled page (``SETTLE_MS`` after the last one, as a user's next click
would): the minimap's thumbnail, redrawn 250 ms after a drawing, is not counted in the next action.

Each figure is the median of ``--runs`` (the page reloaded for ``open``). ``open`` is timed on a
browser that never laid the graph out (its localStorage cleared: ``first visit``) and then again
(``laid out before``: the page keeps laid-out positions, ``frontend/src/layout_cache.js``). The
issue's goals (5,000 operators in any shape): open under 1 s, a zoom under 200 ms.

    .venv/bin/python bench/browser_graph.py                   # 5,000 operators: 10 jobs x 20 stages x 25
    .venv/bin/python bench/browser_graph.py --shape wide      # 5,000 operators: 50 jobs x 10 stages x 10
    .venv/bin/python bench/browser_graph.py --shape long      # 1 job x 500 stages x 10 (also: many, fat, flat)
    .venv/bin/python bench/browser_graph.py --jobs 2 --stages 10 --ops 50
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ingest_server import running_server  # noqa: E402 - after the path set-up above

CHROMIUM = "/usr/bin/chromium"
APP_ID = "local-bench-graph"
T0 = 1_763_731_200_000


def events(jobs: int, stages: int, ops: int) -> list[dict[str, Any]]:
    """The agent events of the synthetic application (docs/ingest-events.md)."""
    out: list[dict[str, Any]] = []
    t = T0

    def add(type_: str, event_id: str, **fields: Any) -> None:
        nonlocal t
        t += 1
        out.append({"event_id": event_id, "type": type_, "app_id": APP_ID, "time": t, **fields})

    add("application_start", "start", name="bench graph", user="bench", spark_version="4.0.0", master="local[2]")
    rdd = 0
    for j in range(jobs):
        first = j * stages
        add("job_start", f"job_start:{j}", job_id=j, stage_ids=list(range(first, first + stages)),
            call_site=f"collect at bench.py:{j}")
        for s in range(first, first + stages):
            operators = []
            for o in range(ops):
                parents = [rdd - 1] if rdd else []
                operators.append({"rdd_id": rdd, "name": f"rdd{rdd}", "parent_ids": parents,
                                  "scope_name": "map" if o else "reduceByKey", "num_partitions": 2})
                rdd += 1
            add("stage_submitted", f"stage_submitted:{s}", stage_id=s, attempt=0, num_tasks=2, name=f"stage {s}",
                parent_stage_ids=[s - 1] if s else [], job_id=j, operators=operators)
            add("stage_completed", f"stage_completed:{s}", stage_id=s, attempt=0, num_tasks=2, status="succeeded",
                name=f"stage {s}", parent_stage_ids=[s - 1] if s else [], job_id=j,
                metrics={"tasks": 2, "executor_run_time_ms": 40})
        add("dataset_io", f"read:{j}", path=f"file:/data/in-{j}", direction="read", format="text", job_id=j,
            rdd_id=first * ops)
        add("dataset_io", f"write:{j}", path=f"file:/data/out-{j}", direction="written", format="text", job_id=j)
        add("job_end", f"job_end:{j}", job_id=j, status="succeeded")
    add("application_end", "end")
    return out


def post(url: str, token: str, batch: list[dict[str, Any]]) -> None:
    request = urllib.request.Request(url, data=json.dumps({"events": batch}).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as answer:
        assert answer.status == 200, answer.read()


@contextlib.contextmanager
def served_page(prefix: str, stream: list[dict[str, Any]]) -> Iterator[tuple[Any, str]]:
    """A real server (gunicorn, SQLite in a temporary folder) holding ``stream``'s agent events, and a
    page of Debian's chromium (1280x800) logged in to it as the local admin: (page, base URL)."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        var = Path(tmp)
        # SQLite in the temporary folder, whatever database this shell points at
        env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        env.update(LINEAGE_VAR_DIR=str(var), LINEAGE_HTTPS="false", SECRET_KEY=secrets.token_urlsafe(40))
        manage = [sys.executable, str(ROOT / "manage.py")]
        subprocess.run([*manage, "migrate", "-v", "0"], env=env, check=True, cwd=ROOT)
        subprocess.run([*manage, "ensure_local_setup", "--var", str(var)], env=env, check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
        token = (var / "agent-token").read_text().strip()
        password = (var / "admin-password").read_text().strip()
        with running_server(env, var, workers=1, threads=4, celery=False) as server:
            base = f"http://127.0.0.1:{server.port}"
            for start in range(0, len(stream), 200):
                post(f"{base}/api/v1/ingest/events/", token, stream[start:start + 200])
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.set_default_timeout(120_000)
                # a page that throws never gets ready: the waits below stop on its first error
                page.add_init_script(CATCH_ERRORS)
                page.goto(f"{base}/login/")
                page.fill("input[name='username']", "admin")
                page.fill("input[name='password']", password)
                page.click("button[type='submit'], input[type='submit']")
                page.wait_for_load_state()
                try:
                    yield page, base
                finally:
                    browser.close()


# jobs, stages a job, operators a stage: 5,000 operators each
SHAPES = {
    "deep": (10, 20, 25),
    "wide": (50, 10, 10),
    "long": (1, 500, 10),  # one job of 500 chained stages
    "many": (500, 1, 10),  # 500 jobs of one stage
    "fat": (2, 5, 500),  # stages of 500 operators
    "flat": (1, 1, 5000),  # one stage of 5,000 operators
}
SETTLE_MS = 800  # before each timed action
PAGE_ERROR = "benchPageError"
CATCH_ERRORS = (f"addEventListener('error', (e) => {{ window.{PAGE_ERROR} = String(e.message); }});"
                f"addEventListener('unhandledrejection', (e) => {{ window.{PAGE_ERROR} = String(e.reason); }});")
READY = "document.querySelector('#application-page')?.dataset.state === 'ready'"
IDLE = "document.querySelector('#application-page')?.dataset.layout === 'idle'"


def failed(page: Any) -> None:
    """Stops the bench on the page's first uncaught error (it would never be ready or idle)."""
    error = page.evaluate(f"window.{PAGE_ERROR} ?? null")
    if error:
        raise SystemExit(f"the page failed: {error}")


def timed(page: Any, action: str) -> float:
    """Milliseconds from running ``action`` (JS) in the page until the page's layout is idle again."""
    return page.evaluate(
        f"""() => new Promise((done) => {{
            const start = performance.now();
            const wait = () => ({IDLE}) || window.{PAGE_ERROR}
                ? done(performance.now() - start) : requestAnimationFrame(wait);
            try {{
                {action};
            }} catch (error) {{
                window.{PAGE_ERROR} = String(error);
            }}
            requestAnimationFrame(wait);
        }})"""
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", choices=sorted(SHAPES), help="a named shape (overrides --jobs, --stages, --ops)")
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--stages", type=int, default=20, help="stages per job")
    parser.add_argument("--ops", type=int, default=25, help="operators per stage")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--screenshot", help="save the opened page (1280x800) to this PNG file")
    parser.add_argument("--all-operators", action="store_true",
                        help="also time the operators level (every operator drawn: minutes at 5,000)")
    args = parser.parse_args()
    if args.shape:
        args.jobs, args.stages, args.ops = SHAPES[args.shape]

    stream = events(args.jobs, args.stages, args.ops)
    operators = args.jobs * args.stages * args.ops
    print(f"{operators} operators in {args.jobs * args.stages} stages of {args.jobs} jobs", flush=True)
    with served_page("bench-graph-", stream) as (page, base):
        figures: dict[str, list[float]] = {}
        page.evaluate("localStorage.clear()")  # the first open lays the graph out
        for run in range(args.runs + 1):
            # from a blank page: the page before's own work (its minimap's thumbnail, drawn
            # 250 ms after the graph) held the next navigation's start for up to 2 s
            page.goto("about:blank")
            page.goto(f"{base}/applications/{APP_ID}/")  # no level in the URL: the readable one
            page.wait_for_function(f"(({READY}) && ({IDLE})) || window.{PAGE_ERROR}", polling="raf")
            failed(page)
            nav = page.evaluate(
                """() => {
                    const api = performance.getEntriesByType('resource')
                        .find((e) => e.name.includes('/graph/'));
                    const doc = performance.getEntriesByType('navigation')[0];
                    const mark = (name) => performance.getEntriesByName(name, 'mark')[0]?.startTime ?? NaN;
                    return {open: performance.now(), api: api ? api.duration : NaN,
                            asked: api ? api.startTime : NaN, answered: api ? api.responseEnd : NaN,
                            ready: doc ? doc.domContentLoadedEventEnd : NaN,
                            read: mark('lineage:graph-read'), drawn: mark('lineage:graph-drawn')};
                }"""
            )
            opened = "open (first visit)" if run == 0 else "open (laid out before)"
            figures.setdefault(opened, []).append(nav["open"])
            figures.setdefault("api", []).append(nav["api"])
            split = page.evaluate("window.lineageZoom.lastDraw()")
            print(f"  {opened} {nav['open']:.0f} ms: document ready {nav['ready']:.0f}, graph asked"
                  f" {nav['asked']:.0f}, answered {nav['answered']:.0f} (api {nav['api']:.0f} ms), layout"
                  f" {split['how']} {split['layout']:.0f} ms, whole draw {split['total']:.0f} ms; graph read"
                  f" {nav['read']:.0f}, handed to Cytoscape {nav['drawn']:.0f}", flush=True)
        if args.screenshot:
            page.wait_for_timeout(SETTLE_MS)  # the minimap's thumbnail drawn
            page.screenshot(path=args.screenshot)
        level = page.evaluate("window.lineageZoom.level()")
        nodes = page.evaluate("window.lineageGraph.nodes().length")
        # the first stage drawn: a big application opens with the jobs around the framed one collapsed
        stage = page.evaluate("window.lineageGraph.nodes('.stage.collapsed')[0]?.id() ?? null")
        status = page.text_content(".graph-status")
        print(f"opens at the {level} level, {nodes} nodes drawn ({status})")
        steps = [("zoom in (one stage)", f"window.lineageZoom.zoomIn({json.dumps(stage)})"),
                 ("zoom out (one stage)", f"window.lineageZoom.zoomOut({json.dumps(stage)})")] * args.runs
        if stage is None:
            print("  no collapsed stage drawn: no zoom timed")
            steps = []
        steps += [(f"level {name}", f"document.querySelector('#level-{name}').click()")
                  for name in ("job", "application", "stage")]
        if args.all_operators:
            steps.append(("level operator", "document.querySelector('#level-operator').click()"))
        for name, action in steps:
            # each action alone: the minimap redraws its thumbnail 250 ms after the last drawing
            # (a full cy.png()), which must not land in the next action's frames
            page.wait_for_timeout(SETTLE_MS)
            figures.setdefault(name, []).append(timed(page, action))
            failed(page)
            split = page.evaluate("window.lineageZoom.lastDraw()")
            print(f"  {name} {figures[name][-1]:.0f} ms: elements {split['elements']:.0f},"
                  f" add {split['add']:.0f}, layout {split['layout']:.0f}"
                  f" ({split['how']}, {split['nodes']} nodes),"
                  f" view {split['view']:.0f}, whole draw {split['total']:.0f}",
                  flush=True)
    for name, values in figures.items():
        print(f"{name:24s} {statistics.median(values):9.0f} ms   (runs: {', '.join(f'{v:.0f}' for v in values)})")


if __name__ == "__main__":
    main()
