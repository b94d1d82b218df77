from __future__ import annotations

import hashlib

from django.db import models

from lineage_server.catalog.models.application import Application


def dataset_key(path: str) -> str:
    """Unique key of a path (paths can be longer than an index allows)."""
    return hashlib.sha256(path.encode()).hexdigest()


class IODirection(models.TextChoices):
    READ = "read"
    WRITTEN = "written"


class Dataset(models.Model):
    """A file, folder or table that applications read or write; shared across applications."""

    key = models.CharField(max_length=64, unique=True, editable=False)
    path = models.TextField()
    format = models.CharField(max_length=64, blank=True, default="")
    size_bytes = models.BigIntegerField(null=True, blank=True)
    # Its OpenLineage name, when an OpenLineage event named it (`path` is then derived from it).
    namespace = models.TextField(blank=True, default="")
    name = models.TextField(blank=True, default="")
    # Columns, from OpenLineage's `schema` facet: [{"name", "type", "description", "fields"}].
    schema_fields = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["path"]

    def __str__(self) -> str:
        return self.path


class DatasetIO(models.Model):
    """An edge between an application (job, RDD) and a dataset it read or wrote."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="ios")
    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="dataset_ios")
    direction = models.CharField(max_length=8, choices=IODirection.choices)
    job_id = models.IntegerField(null=True, blank=True)
    sql_execution_id = models.BigIntegerField(null=True, blank=True)
    rdd_id = models.IntegerField(null=True, blank=True)
    size_bytes = models.BigIntegerField(null=True, blank=True)
    at = models.DateTimeField(null=True, blank=True)
    # OpenLineage's `columnLineage` facet of a written dataset: {"fields": {column: {"inputFields": [...]}}, ...}.
    column_lineage = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["application", "direction"])]
