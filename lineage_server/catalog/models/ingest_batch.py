from __future__ import annotations

from django.db import models


class IngestBatch(models.Model):
    """Events accepted by one ingest request and not applied yet, in the order sent; deleted once applied.

    The request that accepts a batch stores it here, in the transaction that records its event ids,
    so an accepted event outlives a crash before it is applied. Batches are applied in primary key
    order, many in one transaction (``catalog.services._rounds``).
    """

    # The accepted events as validated (docs/ingest-events.md's fields, the type's fields under "body").
    events = models.JSONField()
    size = models.PositiveIntegerField()  # len(events): a round takes batches up to a number of events
    received_at = models.DateTimeField(auto_now_add=True)
    # Why applying this batch alone failed: set aside (kept, logged), so the batches after it are applied.
    error = models.TextField(blank=True, default="")
