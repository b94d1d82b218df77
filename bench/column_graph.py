"""The pipeline page's column mode at scale, in headless Chromium: how long the column graph of a
pipeline of ``--chains`` x ``--depth`` jobs and their columns takes to open.

Every job reads one dataset and writes the next of its chain (``--columns`` columns each: the first
one copied, the others transformed, aggregated or computed from two inputs; one filters the rows);
all chains start from one ``raw`` dataset. The events (our agent's ``dataset_io`` with its
``column_lineage``) are posted through the ingest API of a real server (gunicorn, SQLite in a
temporary folder); the page is opened as the local admin, centred on ``raw`` with ``--depth`` jobs
downstream, in Debian's chromium at 1280x800. Printed, as the median of ``--runs``:

- ``columns``: from navigation start until the column graph is laid out and drawn (``?mode=columns``);
- ``datasets`` (the baseline, same pipeline, same run): the same for the dataset graph;
- ``api``: the column graph API's answer time, as the page's fetch saw it; and the ratio columns/datasets.

The issue's goal: the column graph of a pipeline of 50 jobs and 500 columns opens in under 1 s.

    .venv/bin/python bench/column_graph.py                     # 10 chains x 5 jobs, 10 columns: 510 columns
    .venv/bin/python bench/column_graph.py --screenshot /tmp/columns.png
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from browser_graph import T0, served_page  # noqa: E402 - after the path set-up above

KINDS = ["IDENTITY", "TRANSFORMATION", "AGGREGATION"]


def _input(path: str, column: str, kind: str, subtype: str) -> dict[str, Any]:
    return {"namespace": "file", "name": path, "field": column, "transformations": [{"type": kind, "subtype": subtype}]}


def events(chains: int, depth: int, columns: int) -> list[dict[str, Any]]:
    """The agent events of the pipeline: one application a job."""
    out: list[dict[str, Any]] = []
    for chain in range(chains):
        source = "/bench/raw"
        for step in range(depth):
            app = f"local-bench-col-{chain}-{step}"
            target = f"/bench/c{chain}/s{step}"
            fields = {}
            for c in range(columns):
                inputs = [_input(source, f"col{c}", "DIRECT", KINDS[min(c, 2) if c < 3 else c % 3])]
                if c % 4 == 3:  # computed from two inputs
                    inputs.append(_input(source, f"col{c - 1}", "DIRECT", "TRANSFORMATION"))
                fields[f"col{c}"] = {"inputFields": inputs}
            lineage = {"fields": fields, "dataset": [_input(source, "col1", "INDIRECT", "FILTER")]}
            t = T0 + chain * 1000 + step * 10
            out += [
                {"event_id": "start", "type": "application_start", "app_id": app, "time": t, "name": app},
                {"event_id": "read", "type": "dataset_io", "app_id": app, "time": t + 1, "path": f"file:{source}",
                 "direction": "read", "format": "parquet", "sql_execution_id": 0},
                {"event_id": "write", "type": "dataset_io", "app_id": app, "time": t + 2, "path": f"file:{target}",
                 "direction": "written", "format": "parquet", "sql_execution_id": 0, "column_lineage": lineage},
                {"event_id": "end", "type": "application_end", "app_id": app, "time": t + 3},
            ]
            source = target
    return out


def opened(page: Any, url: str, mode: str) -> dict[str, float]:
    """Milliseconds from navigation start until ``url`` is drawn in ``mode``, and its API's time."""
    page.goto("about:blank")
    page.goto(url)
    page.wait_for_function(
        "(() => { const p = document.querySelector('#pipeline-page'); return p"
        f" && p.dataset.mode === '{mode}' && p.dataset.state === 'ready' && p.dataset.layout === 'idle'; }})()",
        polling="raf")
    return page.evaluate(
        """() => {
            const api = performance.getEntriesByType('resource')
                .find((e) => e.name.includes('/columns/') || e.name.includes('/graph/'));
            return {open: performance.now(), api: api ? api.duration : NaN, asked: api ? api.startTime : NaN};
        }""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chains", type=int, default=10)
    parser.add_argument("--depth", type=int, default=5, help="jobs a chain (at most 10: the page's depth limit)")
    parser.add_argument("--columns", type=int, default=10, help="columns a dataset")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--screenshot", help="save the opened column graph (1280x800) to this PNG file")
    args = parser.parse_args()

    with served_page("bench-columns-", events(args.chains, args.depth, args.columns)) as (page, base):
        raw = page.evaluate("fetch('/api/v1/datasets/?path=/bench/raw').then((r) => r.json())")
        pk = next(d["id"] for d in raw["results"] if d["path"] == "file:/bench/raw")
        columns_url = f"{base}/datasets/{pk}/?mode=columns&upstream=0&downstream={args.depth}"
        datasets_url = f"{base}/datasets/{pk}/?mode=datasets&upstream=0&downstream={2 * args.depth}"
        figures: dict[str, list[float]] = {}
        for _ in range(args.runs):
            for name, url, mode in (("datasets", datasets_url, "datasets"),
                                    ("columns", columns_url, "columns")):
                nav = opened(page, url, mode)
                figures.setdefault(name, []).append(nav["open"])
                figures.setdefault(f"{name} api", []).append(nav["api"])
                if mode == "columns":
                    split = page.evaluate("window.lineageColumnDraw")
                    print("  columns open {:.0f} ms: asked at {:.0f}, ".format(nav["open"], nav["asked"])
                          + ", ".join(f"{k} {v:.0f}" for k, v in split.items()), flush=True)
        drawn = page.evaluate("[window.lineageGraph.nodes('.column').length,"
                              " window.lineageGraph.nodes('.dataset-box').length,"
                              " window.lineageGraph.edges().length]")
        print(f"{args.chains * args.depth} jobs; drawn: {drawn[0]} columns of {drawn[1]} datasets,"
              f" {drawn[2]} edges")
        if args.screenshot:
            page.screenshot(path=args.screenshot)
    for name, values in figures.items():
        print(f"{name:16s} {statistics.median(values):7.0f} ms   (runs: {', '.join(f'{v:.0f}' for v in values)})")
    ratio = statistics.median(figures["columns"]) / statistics.median(figures["datasets"])
    print(f"columns / datasets open: {ratio:.2f}")


if __name__ == "__main__":
    main()
