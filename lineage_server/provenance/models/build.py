from __future__ import annotations

from django.db import models


class BuildStatus(models.TextChoices):
    """queued -> running -> succeeded / failed."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class IndexBuild(models.Model):
    """One run of the Spark job that indexes a graph's triples (an index generation when it succeeds).

    ``previous`` is the generation it extended (incremental: only the batches after
    ``previous.upto_batch`` were read), None for a build from scratch. Queries read the newest
    succeeded generation.
    """

    graph = models.ForeignKey("provenance.ProvenanceGraph", on_delete=models.CASCADE, related_name="builds")
    status = models.CharField(max_length=16, choices=BuildStatus.choices, default=BuildStatus.QUEUED)
    full = models.BooleanField(default=False)  # asked to start from scratch
    requested_by_label = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True, default="")
    previous = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="next")
    upto_batch = models.ForeignKey("provenance.TripleBatch", null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")  # the newest batch it holds
    location = models.TextField(blank=True, default="")  # the generation's folder, relative to the store root
    threshold = models.PositiveIntegerField(null=True, blank=True)
    splits = models.JSONField(default=list, blank=True)
    meta = models.JSONField(default=dict, blank=True)  # counts and timings (the generation's meta.json)
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["graph", "status", "-id"])]

    def __str__(self) -> str:
        return f"index build {self.pk} of graph {self.graph_id} ({self.status})"

    @property
    def duration_ms(self) -> int | None:
        if self.started_at and self.finished_at:
            return int((self.finished_at - self.started_at).total_seconds() * 1000)
        return None
