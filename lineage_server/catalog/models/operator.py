from __future__ import annotations

from django.db import models

from lineage_server.catalog.models.application import Application
from lineage_server.catalog.models.stage import Stage


class Operator(models.Model):
    """An RDD (or a SQL plan node's RDD) as it runs inside one stage."""

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="operators")
    stage = models.ForeignKey(Stage, on_delete=models.CASCADE, related_name="operators")
    rdd_id = models.IntegerField()
    name = models.CharField(max_length=1024, blank=True, default="")
    parent_ids = models.JSONField(default=list, blank=True)
    scope_id = models.CharField(max_length=64, blank=True, default="")
    scope_name = models.CharField(max_length=256, blank=True, default="")
    call_site = models.TextField(blank=True, default="")
    num_partitions = models.IntegerField(default=0)
    cached = models.BooleanField(default=False)

    class Meta:
        ordering = ["stage_id", "rdd_id"]
        constraints = [models.UniqueConstraint(fields=["stage", "rdd_id"], name="uniq_operator")]
        indexes = [models.Index(fields=["application", "rdd_id"])]

    def __str__(self) -> str:
        return f"{self.name} [{self.rdd_id}]"


class PythonPipeline(models.Model):
    """The Python-side operators (map, filter, ...) that PySpark fused into one JVM PythonRDD."""

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="python_pipelines")
    rdd_id = models.IntegerField()
    operators = models.JSONField(default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["application", "rdd_id"], name="uniq_python_pipeline")]
