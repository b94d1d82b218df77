"""Provenance models, one module per entity."""

from lineage_server.provenance.models.batch import TripleBatch
from lineage_server.provenance.models.build import BuildStatus, IndexBuild
from lineage_server.provenance.models.graph import ProvenanceGraph

__all__ = ["BuildStatus", "IndexBuild", "ProvenanceGraph", "TripleBatch"]
