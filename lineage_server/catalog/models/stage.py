from __future__ import annotations

from django.db import models

from lineage_server.catalog.models.application import Application, RunStatus
from lineage_server.catalog.models.job import Job


class Stage(models.Model):
    """A stage (latest attempt) with its parents and the task metrics summed over its tasks."""

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="stages")
    stage_id = models.IntegerField()
    attempt = models.IntegerField(default=0)
    jobs = models.ManyToManyField(Job, related_name="stages", blank=True)
    name = models.CharField(max_length=512, blank=True, default="")
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.UNKNOWN)
    num_tasks = models.IntegerField(default=0)
    parent_stage_ids = models.JSONField(default=list, blank=True)
    call_site = models.TextField(blank=True, default="")
    failure_reason = models.TextField(blank=True, default="")
    metrics = models.JSONField(default=dict, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["application_id", "stage_id"]
        constraints = [models.UniqueConstraint(fields=["application", "stage_id"], name="uniq_stage")]

    def __str__(self) -> str:
        return f"{self.application_id}/stage {self.stage_id}"
