from __future__ import annotations

from django.db import models

from lineage_server.catalog.models.application import Application


class OpenLineageJob(models.Model):
    """A job an OpenLineage producer (the Spark agent, Airflow, dbt...) reported: a namespace and a name."""

    team = models.ForeignKey("accounts.Team", on_delete=models.CASCADE, related_name="openlineage_jobs")
    namespace = models.CharField(max_length=1024)
    name = models.CharField(max_length=1024)
    # The job's facets (sql, jobType, sourceCode...), each the latest sent; `_deleted` ones removed.
    facets = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["namespace", "name"]
        constraints = [models.UniqueConstraint(fields=["team", "namespace", "name"], name="uniq_openlineage_job")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class OpenLineageRun(models.Model):
    """What an application that is an OpenLineage run adds: its job, run id, parent run and run facets."""

    application = models.OneToOneField(Application, on_delete=models.CASCADE, primary_key=True,
                                       related_name="openlineage_run")
    job = models.ForeignKey(OpenLineageJob, on_delete=models.CASCADE, related_name="runs")
    run_id = models.UUIDField()
    parent_run_id = models.UUIDField(null=True, blank=True)  # from the `parent` run facet
    producer = models.TextField(blank=True, default="")
    facets = models.JSONField(default=dict, blank=True)  # run facets, each the latest sent

    def __str__(self) -> str:
        return str(self.run_id)
