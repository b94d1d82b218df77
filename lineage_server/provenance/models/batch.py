from __future__ import annotations

from django.db import models


class TripleBatch(models.Model):
    """One upload of triples (or one captured run's lineage exported as triples), kept as one
    Parquet file in the graph's folder; an index build takes every batch up to the newest."""

    graph = models.ForeignKey("provenance.ProvenanceGraph", on_delete=models.CASCADE, related_name="batches")
    created_at = models.DateTimeField(auto_now_add=True)
    created_by_label = models.CharField(max_length=150, blank=True, default="")
    source = models.CharField(max_length=300)  # "jsonl", "parquet" or "application:<app id>"
    rows = models.BigIntegerField(default=0)
    bytes = models.BigIntegerField(default=0)
    location = models.TextField()  # relative to the lineage store's root
    details = models.JSONField(default=dict, blank=True)  # e.g. the capture points an export left out

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"batch {self.pk} of graph {self.graph_id} ({self.rows} triples)"
