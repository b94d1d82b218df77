"""Answering a diff in the worker (``dispatch.run_trace`` hands diffs here once claimed).

Opens both runs' folders (the newer one as the trace's, the older one beside it), compares the
output's records by key (``capture_agent.record.query.diff``) and, when the diff names one output
key, explains it: the input records in one run's lineage only, and the additive check replayed
on the worker's Spark session. The rows go to the newer run's store as JSON lines (downloads read
them); the row keeps the counts per fate, every output's fate and values up to ``OUTPUT_LIMIT``,
and the explanation. Its timings: ``open_ms`` and ``open_old_ms`` (the two folders), ``compare_ms``
(every output's fate), ``explain_ms`` (the key's input records, both runs walked side by side, and
the check's two replays side by side; the output rows are made meanwhile) and ``store_ms`` (the
rows made, when no key is explained, and written).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import asdict
from typing import Any

from django.conf import settings
from django.utils import timezone

from capture_agent.record import LineageRun
from capture_agent.record.query.diff import Explanation, NotSameJob, OutputDiff, RunDiff, side_by_side
from capture_agent.record.query.results import json_value
from lineage_server.catalog.models import CapturePoint
from lineage_server.tracing.models import Trace, TraceStatus
from lineage_server.tracing.services.failures import TraceFailure, lineage_failures
from lineage_server.tracing.services.opened_run import close_books, open_run
from lineage_server.tracing.services.watch import Watch

OUTPUT_LIMIT = 500  # outputs kept in the row (all of them are in the result file)
INPUT_LIMIT = 200  # input records of an explanation kept in the row
CSV_COLUMNS = ["row", "key", "fate", "old_value", "new_value", "side", "capture_id", "record_id", "file", "offset",
               "value"]
EMPTY = dict.fromkeys(CSV_COLUMNS)


def _old_dir(trace: Trace) -> str:
    assert trace.compared_with is not None
    local = trace.target.split("/", 1)[-1]
    point = CapturePoint.objects.filter(application=trace.compared_with, capture_id__endswith=f"/{local}").first()
    if point is None:
        raise TraceFailure(f"{trace.compared_with.app_id} has no capture point {local} any more")
    return point.location.rstrip("/").rsplit("/", 1)[0]


def wanted_key(diff: RunDiff, asked: Any) -> Any:
    """The output key a diff asked for (JSON: a list for a tuple key) as the diff's keys are."""
    for output in diff.outputs():
        if json_value(output.key) == asked:
            return output.key
    raise TraceFailure(f"no output has the key {json.dumps(asked)} in either run")


def output_row(output: OutputDiff) -> dict[str, Any]:
    return {**EMPTY, "row": "output", "key": json_value(output.key), "fate": output.fate,
            "old_value": [json_value(v) for _, v in output.old], "new_value": [json_value(v) for _, v in output.new]}


def input_rows(output: OutputDiff, why: Explanation, runs: tuple[str, str]) -> Iterator[dict[str, Any]]:
    """The explained output's input records, added (of the newer run, ``runs[1]``) and removed (the older's)."""
    for side, records, run_id in (("added", why.added, runs[1]), ("removed", why.removed, runs[0])):
        for r in records:
            yield {**EMPTY, "row": "input", "key": json_value(output.key), "side": side,
                   "capture_id": f"{run_id}/{r.capture_id}",
                   "record_id": r.record_id, "file": r.source, "offset": r.offset, "value": json_value(r.value)}


def answer_diff(trace: Trace, watch: Watch, spark: Callable[[], Any] | None) -> None:
    with watch.interruptible():
        opened = open_run(trace, watch, spark)  # the additive check replays on Spark, started then
        clock, sc = opened.clock, opened.sc
        old_dir = _old_dir(trace)
        with lineage_failures(old_dir):
            old = LineageRun(old_dir, sc=sc, trace_mode=settings.LINEAGE["TRACE_MODE"])
            clock.lap("open_old_ms")
            try:
                diff = RunDiff(old, opened.run, opened.local(trace.target), trace.selection.get("key_fields"))
            except NotSameJob as exc:
                raise TraceFailure(str(exc)) from None
            outputs = diff.outputs()
            clock.lap("compare_ms")
            explained, inputs = None, []
            if trace.selection.get("key") is not None:
                key = wanted_key(diff, trace.selection["key"])
                if sc is not None:
                    sc.context()  # the explanation's thread inherits this one's job group and pool
                # the output rows made while the explanation walks and replays (mostly native and Spark)
                why, rows = side_by_side(lambda: diff.explain(key), lambda: [output_row(o) for o in outputs],
                                         sc is not None)
                inputs = list(input_rows(diff.output(key), why, (old.store.run_id, opened.run_id)))
                explained = {**output_row(diff.output(key)), "common": why.common,
                             "added": len(why.added), "removed": len(why.removed),
                             "check": asdict(why.check) if why.check is not None else None,
                             "why_no_check": why.why_no_check, "inputs": inputs[:INPUT_LIMIT]}
                clock.lap("explain_ms")
            else:
                rows = [output_row(o) for o in outputs]
            rows += inputs
            location = opened.result_path(trace).removesuffix(".parquet") + ".jsonl"
            store = opened.run.store.fs
            store.make_dirs(location.rsplit("/", 1)[0])
            store.write_bytes(location, "".join(json.dumps(r) + "\n" for r in rows).encode())
            clock.lap("store_ms")
    uri = opened.run.store.fs.uri(location)
    summary = {"run_id": opened.run_id, "compared_with": trace.compared_with.app_id if trace.compared_with else "",
               "target": trace.target, "key_fields": diff.fields, "counts": diff.counts(),
               "outputs": rows[:min(len(outputs), OUTPUT_LIMIT)], "explained": explained,
               "timings": opened.timings(trace)}
    now = timezone.now()
    updated = Trace.objects.filter(pk=trace.pk, status=TraceStatus.RUNNING).update(
        status=TraceStatus.SUCCEEDED, finished_at=now, result_location=uri, result_count=len(rows), summary=summary,
        points_done=1, points_total=1, records_so_far=len(rows), heartbeat_at=now)
    close_books(trace, updated == 1, uri)
