"""Diff latency through the server: the diff of two runs of a word count asked through the REST API,
answered by a warm worker, beside one backward trace on the same runs (issue 45's last goal).

The runs are diff.py's: the Zipf text of record_capture.py (--size-mb) is the old run's input, the
new run's drops every 200th line and adds --added lines. Both are captured as the same job (one
application name, one code), each in a Spark application of its own, and registered with a real
server started here (trace_latency.py's: gunicorn and one Celery worker with its Spark session
warm). The server's folder (--data-dir/diff-api-<size>mb-<added>: database, lineage stores, the
runs' counts) is kept: a later run asks the same runs again without capturing them (--recapture
captures afresh). Then, after one warm-up question of each kind, --repeat times, through the API
with a personal token and polled to the end:

- trace: a changed word's count traced back to its input lines (the yardstick);
- diff, one output: that word explained against the previous run of the job (input lines in one
  run's lineage only, the additive check);
- diff, all outputs: every word's fate.

Printed per question and as medians: request-to-finished time and its split from the answer's own
timings: queued (created -> taken by the worker), open (the run folders opened; a trace's selection
too), diff (compare every output, and explain the one asked: of which explain) or walk, store (the
answer written), and the rest (HTTP, polling, bookkeeping). Then the ratios to the trace, and the
answers checked: every output's fate and values against the two runs' collected counts, the
explanation against ``RunDiff`` in this process on the same run folders, and the trace's records
against the explanation's (common + added).

    .venv/bin/python bench/diff_latency.py --size-mb 64        # quick
    .venv/bin/python bench/diff_latency.py                     # 1 GB, the goal's figures
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import _asking_server as asking
from _ingest_server import running_server
from diff import changed_text
from record_capture import zipf_text

APP_NAME = "diff-bench-wordcount"
DIFF_PARTS = ("queued", "open", "diff", "explain", "store", "rest")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=1024.0, help="the old run's input size (default 1024)")
    parser.add_argument("--added", type=int, default=1000, help="lines the new run's input adds (default 1000)")
    parser.add_argument("--repeat", type=int, default=5, help="questions of each kind, timed (default 5)")
    parser.add_argument("--check", type=int, default=1,
                        help="explanations checked against RunDiff in this process (default 1; 0: none)")
    parser.add_argument("--recapture", action="store_true", help="capture both runs afresh")
    asking.add_server_arguments(parser)
    args = parser.parse_args()

    old_text, vocabulary = zipf_text(args.data_dir, args.size_mb, args.seed)
    new_text = changed_text(old_text, vocabulary, args.added)
    var = Path(args.data_dir) / f"diff-api-{args.size_mb:g}mb-{args.added}"
    runs_file = var / "runs.json"
    if args.recapture and var.exists():
        shutil.rmtree(var)
    reuse = runs_file.exists()
    var.mkdir(parents=True, exist_ok=True)
    setup = asking.set_up_server(var, args, reset=not reuse)
    with running_server(setup.env, var, workers=2, threads=4, celery=True) as server:
        base = f"http://127.0.0.1:{server.port}"
        if not reuse:
            runs = capture_both(old_text, new_text, base, setup.agent_token, str(var / "store"), args.master)
            runs_file.write_text(json.dumps(runs))
        runs = json.loads(runs_file.read_text())
        old, new = runs["old"], runs["new"]
        print(f"\ninputs {os.path.getsize(old_text) / 1e6:.0f} MB and {os.path.getsize(new_text) / 1e6:.0f} MB; "
              f"{'runs kept in' if reuse else 'captured in'} {var}: {old['app_id']} "
              f"({old['seconds']:.1f} s), {new['app_id']} ({new['seconds']:.1f} s); server {base}, worker on "
              f"{args.master}")
        oracle = fates(old["counts"], new["counts"])
        changed = sorted(k for k, (fate, _, _) in oracle.items() if fate == "changed")
        words = random.Random(args.seed).sample(changed, args.repeat + 1)
        api = asking.Api(base, setup.personal_token)
        # the worker's first questions of this run (its code loaded, its Spark session's first jobs)
        asking.word_trace(api, new["app_id"], words[-1], args.poll)
        ask_diff(api, new["app_id"], words[-1], args.poll)
        ask_diff(api, new["app_id"], None, args.poll)
        traces, ones, alls = [], [], []
        for word in words[:-1]:  # taking turns, so that the machine's load weighs on each kind alike
            traces.append(asking.word_trace(api, new["app_id"], word, args.poll))
            ones.append(ask_diff(api, new["app_id"], word, args.poll))
            alls.append(ask_diff(api, new["app_id"], None, args.poll))
        trace_ms = asking.report(f"{args.repeat} traces of one word (ms)", traces, asking.TRACE_PARTS,
                                 ("records", "jobs"))["total"]
        one_ms = asking.report(f"{args.repeat} diffs of one output, explained (ms)", ones, DIFF_PARTS,
                               ("added", "removed", "common", "holds"))["total"]
        all_ms = asking.report(f"{args.repeat} diffs of all outputs (ms)", alls, DIFF_PARTS,
                               ("changed",))["total"]
        print(f"\nmedians: trace {trace_ms / 1000:.2f} s; diff of one output {one_ms / 1000:.2f} s (goal <= 2 s), "
              f"{one_ms / trace_ms:.1f}x the trace; diff of all outputs {all_ms / 1000:.2f} s, "
              f"{all_ms / trace_ms:.1f}x the trace (goal <= 10x)")
        check_all(api, alls[0]["answer"], oracle)
        for trace, one in zip(traces, ones, strict=True):
            if trace["records"] != one["common"] + one["added"]:
                raise AssertionError(f"{trace['label']}: the trace found {trace['records']} input lines, the "
                                     f"explanation {one['common']} common + {one['added']} added")
        if args.check:
            check_explained(api, ones[: args.check], old["run_dir"], new["run_dir"], args.master)
        print(f"checked: every output of a diff of all outputs, {len(traces)} traces' records against their "
              f"explanation, {min(args.check, len(ones))} explanation(s) against RunDiff in this process")


def capture_both(old_text: str, new_text: str, server: str, token: str, store: str, master: str) -> dict[str, Any]:
    """The two runs, each a Spark application of its own with one name; per run: its application
    id, run folder, counts and capture seconds."""
    runs = {}
    for side, text in (("old", old_text), ("new", new_text)):
        spark = asking.wordcount_session(APP_NAME, master)
        try:
            app_id, run_dir, counts, seconds = asking.captured_wordcount(spark, text, server, token, store)
        finally:
            spark.stop()
        runs[side] = {"app_id": app_id, "run_dir": run_dir, "counts": counts, "seconds": seconds}
    return runs


def fates(old: dict[str, int], new: dict[str, int]) -> dict[str, tuple[str, list[Any], list[Any]]]:
    """Each word's fate and old and new records, from the two runs' counts."""
    found = {}
    for word in old.keys() | new.keys():
        was, now = [[word, old[word]]] if word in old else [], [[word, new[word]]] if word in new else []
        fate = "added" if not was else "removed" if not now else "unchanged" if was == now else "changed"
        found[word] = (fate, was, now)
    return found


def ask_diff(api: asking.Api, app_id: str, word: str | None, poll: float) -> dict[str, Any]:
    """A diff of the new run against the previous run of the job: of every output, and with ``word``
    its explanation."""
    body: dict[str, Any] = {"application": app_id, "name": f"bench: {word or 'all'}"}
    if word is not None:
        body["key"] = word
    diff, total = api.ask("/api/v1/diffs/", body, poll)
    t = diff["summary"]["timings"]
    split = {"queued": t["queued_ms"] or 0, "open": t["open_ms"] + t.get("open_old_ms", 0),
             "diff": t["compare_ms"] + t.get("explain_ms", 0), "store": t["store_ms"]}
    row = {"label": word or "all", "total": total, "rest": total - sum(split.values()),
           "explain": t.get("explain_ms", 0), "changed": diff["summary"]["counts"]["changed"], "answer": diff, **split}
    why = diff["summary"]["explained"]
    if why is not None:
        row.update(added=why["added"], removed=why["removed"], common=why["common"],
                   holds=why["check"]["holds"] if why["check"] else None)
    return row


def check_all(api: asking.Api, diff: dict[str, Any], oracle: dict[str, tuple[str, list[Any], list[Any]]]) -> None:
    """Every output row of a diff of all outputs (downloaded) against the runs' counts."""
    counts = Counter(fate for fate, _, _ in oracle.values())
    if diff["summary"]["counts"] != {f: counts[f] for f in ("added", "removed", "changed", "unchanged")}:
        raise AssertionError(f"counts {diff['summary']['counts']} against the runs' {dict(counts)}")
    rows = api.lines(f"/api/v1/diffs/{diff['id']}/download/jsonl/")
    got = {r["key"]: (r["fate"], r["old_value"], r["new_value"]) for r in rows if r["row"] == "output"}
    if got != oracle:
        wrong = sorted(k for k in got.keys() | oracle.keys() if got.get(k) != oracle.get(k))
        raise AssertionError(f"{len(wrong)} outputs differ from the runs' counts, e.g. {wrong[:3]}")


def check_explained(api: asking.Api, ones: list[dict[str, Any]], old_dir: str, new_dir: str, master: str) -> None:
    """Each explanation (its input rows downloaded) against RunDiff's on the same run folders."""
    from capture_agent.record import LineageRun
    from capture_agent.record.query.diff import RunDiff

    spark = asking.wordcount_session("diff-bench-check", master)
    try:
        sc = spark.sparkContext
        old, new = LineageRun(old_dir, sc), LineageRun(new_dir, sc)
        target = new.outputs()[-1].capture_id
        for one in ones:
            why = RunDiff(old, new, target).explain(one["label"])
            explained = one["answer"]["summary"]["explained"]
            if explained["check"] != (asdict(why.check) if why.check else None):
                raise AssertionError(f"{one['label']}: check {explained['check']} against RunDiff's {why.check}")
            if (explained["added"], explained["removed"], explained["common"]) != (
                    len(why.added), len(why.removed), why.common):
                raise AssertionError(f"{one['label']}: {explained} against RunDiff's")
            rows = api.lines(f"/api/v1/diffs/{one['answer']['id']}/download/jsonl/")
            got = sorted((r["side"], r["file"], r["offset"], r["value"]) for r in rows if r["row"] == "input")
            expected = sorted([("added", r.source, r.offset, r.value) for r in why.added]
                              + [("removed", r.source, r.offset, r.value) for r in why.removed])
            if got != expected:
                raise AssertionError(f"{one['label']}: the input rows differ from RunDiff's")
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
