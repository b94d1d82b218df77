"""Where provenance graphs live in the lineage store: ``<LINEAGE_STORE>/_provenance/<graph id>/``.

``batches/<uuid>.parquet`` holds one upload of triples (its row says which); ``index/<build id>/`` one index
generation (``capture_agent.provenance.layout``). Locations are kept relative to the store root.
"""

from __future__ import annotations

from django.conf import settings

from capture_agent.record.storage.fs import StoreFS


def lineage_store() -> StoreFS:
    """The configured lineage store (``LINEAGE_STORE``)."""
    return StoreFS.resolve(settings.LINEAGE["STORE"])


def path_of(store: StoreFS, location: str) -> str:
    """A location kept in the database (relative to the root) as a path of the store."""
    return store.join(store.root, location)
