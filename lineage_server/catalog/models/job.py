from __future__ import annotations

from django.db import models

from lineage_server.catalog.models.application import Application, RunStatus


class Job(models.Model):
    """A Spark job (one action) of an application."""

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="jobs")
    job_id = models.IntegerField()
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.UNKNOWN)
    description = models.TextField(blank=True, default="")
    call_site = models.TextField(blank=True, default="")
    job_group = models.CharField(max_length=256, blank=True, default="")
    sql_execution_id = models.BigIntegerField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    submitted_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["application_id", "job_id"]
        constraints = [models.UniqueConstraint(fields=["application", "job_id"], name="uniq_job")]

    def __str__(self) -> str:
        return f"{self.application_id}/job {self.job_id}"
