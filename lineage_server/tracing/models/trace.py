from __future__ import annotations

from django.conf import settings
from django.db import models

from lineage_server.catalog.models import Application


class TraceStatus(models.TextChoices):
    """queued -> running -> succeeded / failed / cancelled (a killed worker's trace goes back to queued)."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @classmethod
    def open(cls) -> list[TraceStatus]:
        return [cls.QUEUED, cls.RUNNING]


class Direction(models.TextChoices):
    BACKWARD = "backward"  # where did these records come from?
    FORWARD = "forward"  # what did these records affect?


class TraceKind(models.TextChoices):
    TRACE = "trace"  # which records came from / went into these ones
    WHATIF = "whatif"  # what deleting these records would do (always forward)
    DIFF = "diff"  # which outputs differ from an earlier run of the same job, and the inputs why


class Trace(models.Model):
    """One question asked of an application's record-level lineage, and the summary of its answer:
    a trace, or a what-if (``kind``), which runs, is followed and is kept the same way.

    The answer's records live in the lineage store (``result_location``, a Parquet file written by
    ``capture_agent.record.query.results`` for traces, ``whatif_results`` for what-ifs); the row
    keeps what history pages show at once.
    """

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="traces")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="traces"
    )
    created_by_label = models.CharField(max_length=150, blank=True, default="")  # kept if the user goes
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    # The question.
    kind = models.CharField(max_length=8, choices=TraceKind.choices, default=TraceKind.TRACE, db_index=True)
    direction = models.CharField(max_length=8, choices=Direction.choices)
    start_capture_id = models.CharField(max_length=256, blank=True, default="")  # "" with a seed trace
    selection = models.JSONField(default=dict)  # {"ids": [...]} | {"predicate": {...}} | {"trace": id, ...}
    target = models.CharField(max_length=256, default="end")  # "end", "step" or a capture id (what-if: an output)
    question_key = models.CharField(max_length=64, db_index=True)  # same question on the same lineage
    compared_with = models.ForeignKey(
        Application, null=True, blank=True, on_delete=models.CASCADE, related_name="diffs_against"
    )  # a diff's older run (``application`` is the newer one)
    seed = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="seeded")
    rerun_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reruns")
    answered_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reused_by"
    )  # an earlier trace whose stored answer this one reused

    # What users add.
    name = models.CharField(max_length=200, blank=True, default="")
    note = models.TextField(blank=True, default="")
    pinned = models.BooleanField(default=False)

    # The run.
    status = models.CharField(max_length=16, choices=TraceStatus.choices, default=TraceStatus.QUEUED)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveSmallIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True, default="")
    heartbeat_at = models.DateTimeField(null=True, blank=True)  # the running worker's last sign of life
    sent_at = models.DateTimeField(null=True, blank=True)  # last sent to the broker (lost messages are re-sent)
    points_done = models.PositiveIntegerField(default=0)
    points_total = models.PositiveIntegerField(default=0)
    records_so_far = models.BigIntegerField(default=0)

    # The answer's summary (the records themselves are in the lineage store).
    result_location = models.TextField(blank=True, default="")
    result_count = models.BigIntegerField(null=True, blank=True)
    summary = models.JSONField(default=dict, blank=True)  # points crossed, first page, timings
    graph = models.JSONField(default=dict, blank=True)  # the provenance subgraph for the UI

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["application", "-created_at"]),
            models.Index(fields=["status", "heartbeat_at"]),
        ]

    def __str__(self) -> str:
        if self.kind == TraceKind.DIFF:
            return f"diff {self.pk} of {self.application_id} against {self.compared_with_id}"
        if self.kind == TraceKind.WHATIF:
            return f"what-if {self.pk} of {self.application_id}"
        return f"trace {self.pk} ({self.direction}) of {self.application_id}"

    @property
    def duration_ms(self) -> int | None:
        if self.started_at and self.finished_at:
            return int((self.finished_at - self.started_at).total_seconds() * 1000)
        return None

    @property
    def is_open(self) -> bool:
        return self.status in TraceStatus.open()
