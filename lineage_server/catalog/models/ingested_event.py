from __future__ import annotations

from django.db import models

from lineage_server.catalog.models.application import Application


class IngestedEvent(models.Model):
    """The id of every event accepted (applied, or waiting in an ``IngestBatch``): a re-sent event changes nothing."""

    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="ingested_events")
    event_id = models.CharField(max_length=128)
    type = models.CharField(max_length=32)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["application", "event_id"], name="uniq_ingested_event")]
