from __future__ import annotations

from django.db import models


class RunStatus(models.TextChoices):
    """Lifecycle of an application, job or stage; ``rank`` orders them so late events never regress."""

    UNKNOWN = "unknown"  # known only from another event (out-of-order arrival)
    PENDING = "pending"
    SKIPPED = "skipped"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"

    @classmethod
    def rank(cls, status: str) -> int:
        order = [cls.UNKNOWN, cls.PENDING, cls.SKIPPED, cls.RUNNING, cls.SUCCEEDED, cls.FAILED]
        return order.index(cls(status))


class Application(models.Model):
    """One run of a Spark application, identified by Spark's applicationId."""

    app_id = models.CharField(max_length=128, unique=True)
    # The team whose agent token first reported the application; only its members see it.
    team = models.ForeignKey("accounts.Team", on_delete=models.PROTECT, related_name="applications")
    agent_token = models.ForeignKey(
        "accounts.AgentToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="applications"
    )
    attempt_id = models.CharField(max_length=64, blank=True, default="")
    name = models.CharField(max_length=512, blank=True, default="")
    user = models.CharField(max_length=256, blank=True, default="")
    spark_version = models.CharField(max_length=64, blank=True, default="")
    master = models.CharField(max_length=512, blank=True, default="")
    spark_conf = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.UNKNOWN)
    started_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    # Rolled up by the finalize task when the application ends.
    totals = models.JSONField(default=dict, blank=True)
    # Set with the ingest that makes a finalize owed, cleared by finalize; a starting worker re-queues these.
    finalize_pending = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["status"]), models.Index(fields=["-started_at", "-id"])]

    def __str__(self) -> str:
        return self.app_id

    @property
    def duration_ms(self) -> int | None:
        if self.started_at and self.ended_at:
            return int((self.ended_at - self.started_at).total_seconds() * 1000)
        return None
