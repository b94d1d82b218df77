"""Workflow provenance at scale: provenance graphs of triples, their CSProv indexes and lineage queries."""
