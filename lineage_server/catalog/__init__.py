"""Catalog: the coarse lineage of Spark applications (metadata only)."""
