from __future__ import annotations

from django.db import models

from lineage_server.catalog.models.application import Application


class CaptureKind(models.TextChoices):
    """How ids associate at a capture point (DESIGN.md, capture points)."""

    INPUT = "input"
    STAGE = "stage"
    COMBINER = "combiner"
    REDUCER = "reducer"
    JOIN = "join"
    UNION = "union"
    OUTPUT = "output"


class CapturePoint(models.Model):
    """Where one record-level association table of an application lives in the lineage store."""

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="capture_points")
    capture_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=16, choices=CaptureKind.choices)
    stage_id = models.IntegerField(null=True, blank=True)
    rdd_id = models.IntegerField(null=True, blank=True)
    location = models.TextField()
    rows = models.BigIntegerField(default=0)
    bytes = models.BigIntegerField(default=0)
    parent_capture_ids = models.JSONField(default=list, blank=True)
    files = models.JSONField(default=list, blank=True)  # an input point's files (Hadoop paths)
    # Per-partition tables the agent could not write (disk full, permissions, store gone), as
    # [{"partition": int, "reason": str}]; empty when the point's record-level lineage is complete.
    missing_tables = models.JSONField(default=list, blank=True)
    missing_table_count = models.PositiveIntegerField(default=0)  # len(missing_tables), for queries
    # Non-empty: the action ran plain (the capture refused its query), so the output has no table; why.
    not_captured = models.TextField(blank=True, default="")
    # An output's columns' sources: OpenLineage's columnLineage facet of the query it ran (without
    # _producer/_schemaURL), {} when not known; a traced row's columns name them.
    column_lineage = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["application_id", "id"]
        constraints = [models.UniqueConstraint(fields=["application", "capture_id"], name="uniq_capture_point")]
