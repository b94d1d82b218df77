"""Asking for an index build: the row is the work owed; the Celery task is sent once the transaction commits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone

from lineage_server.provenance.models import BuildStatus, IndexBuild, ProvenanceGraph
from lineage_server.task_queue import queue_task_on_commit

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# The Celery task (provenance.tasks) that runs ``run_index_build``; services queue it by name.
BUILD_INDEX_TASK = "provenance.build_index"


@transaction.atomic
def ask_index_build(graph: ProvenanceGraph, *, by: User, full: bool = False) -> IndexBuild:
    """A queued build of ``graph``'s index: incremental over the batches the newest index lacks,
    or from scratch (``full``, or when the threshold or splits changed since). A build already
    queued is returned instead of a second one: it takes every batch there is when it starts."""
    waiting = IndexBuild.objects.select_for_update().filter(graph=graph, status=BuildStatus.QUEUED).first()
    if waiting is not None:
        if full and not waiting.full:
            waiting.full = True
            waiting.save(update_fields=["full"])
        return waiting
    build = IndexBuild.objects.create(graph=graph, full=full, requested_by_label=by.get_username(),
                                      sent_at=timezone.now())
    queue_task_on_commit(BUILD_INDEX_TASK, build.pk)
    return build
