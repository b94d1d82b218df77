from __future__ import annotations

from django.conf import settings
from django.db import models

DEFAULT_THRESHOLD = 25_000  # the paper's theta: components of at least this many items are cut into sets


class ProvenanceGraph(models.Model):
    """A team's provenance graph: the triples posted to it (``batches``) and its CSProv indexes
    (``builds``). Triples and indexes live in the lineage store under ``_provenance/<id>/``; the
    rows keep what pages show."""

    team = models.ForeignKey("accounts.Team", on_delete=models.CASCADE, related_name="provenance_graphs")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    set_threshold = models.PositiveIntegerField(default=DEFAULT_THRESHOLD)
    splits = models.JSONField(default=list, blank=True)  # top-level splits (lists of datasets); [] = automatic
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="provenance_graphs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    triple_count = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="uniq_provenance_graph_name")]

    def __str__(self) -> str:
        return f"provenance graph {self.name} ({self.team_id})"

    @property
    def folder(self) -> str:
        """Its folder, relative to the lineage store's root."""
        return f"_provenance/{self.pk}"
