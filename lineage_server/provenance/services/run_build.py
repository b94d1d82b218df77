"""Running an index build in the worker: claim it, run the Spark job, keep what it made.

``run_index_build`` is what the Celery task calls, and is tested directly. The claim is a
conditional update (queued -> running), so a message delivered twice builds once. The build
extends the newest succeeded generation with the batches it lacks, unless it was asked to start
from scratch or the graph's threshold or splits changed since that generation.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.utils import timezone

from capture_agent.provenance import BuildOptions, build_index
from lineage_server.claims import claim_queued, fail_running
from lineage_server.provenance.models import BuildStatus, IndexBuild, TripleBatch
from lineage_server.provenance.store import lineage_store, path_of

log = logging.getLogger("lineage_server.provenance")


def run_index_build(build_pk: int, *, worker: str = "", spark: Callable[[], Any]) -> IndexBuild | None:
    """Runs a queued build to its end (succeeded or failed); None if it was not queued.

    Args:
        build_pk: the build.
        worker: the Celery worker's name, kept on the build.
        spark: gives the warm SparkContext.
    """
    build = claim_queued(IndexBuild.objects.select_related("graph"), build_pk, worker)
    if build is None:
        return None
    graph = build.graph
    previous = (IndexBuild.objects.filter(graph=graph, status=BuildStatus.SUCCEEDED).exclude(pk=build.pk)
                .order_by("-upto_batch_id", "-id").first())
    if previous is not None and (build.full or previous.threshold != graph.set_threshold
                                 or previous.splits != graph.splits):
        previous = None
    batches = TripleBatch.objects.filter(graph=graph).order_by("id")
    if previous is not None and previous.upto_batch_id is not None:
        batches = batches.filter(id__gt=previous.upto_batch_id)
    batches_list = list(batches)
    newest = batches_list[-1].pk if batches_list else (previous.upto_batch_id if previous else None)
    store = lineage_store()
    location = f"{graph.folder}/index/{build.pk}"
    try:
        from pyspark.sql import SparkSession

        spark()  # the warm SparkContext; the session below is bound to it
        session = SparkSession.builder.getOrCreate()
        meta = build_index(
            session, store, [path_of(store, b.location) for b in batches_list], path_of(store, location),
            BuildOptions(threshold=graph.set_threshold, splits=graph.splits or None),
            previous=path_of(store, previous.location) if previous else None,
            extra_meta={"graph": graph.pk, "build": build.pk, "batches": [b.pk for b in batches_list]},
        )
    except Exception as exc:
        log.exception("provenance index build %s failed", build.pk)
        fail_running(IndexBuild, build.pk, f"{type(exc).__name__}: {exc}")
        return IndexBuild.objects.get(pk=build.pk)
    IndexBuild.objects.filter(pk=build.pk).update(
        status=BuildStatus.SUCCEEDED, finished_at=timezone.now(), location=location, meta=meta, previous=previous,
        upto_batch_id=newest, threshold=graph.set_threshold, splits=graph.splits,
    )
    return IndexBuild.objects.get(pk=build.pk)
