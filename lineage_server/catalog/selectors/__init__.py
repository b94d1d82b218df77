"""Reads and graph traversal over the catalog."""

from lineage_server.catalog.selectors.applications import (
    applications_ended_before,
    applications_with_counts,
    visible_applications,
)
from lineage_server.catalog.selectors.graph import ApplicationGraph, application_graph

__all__ = [
    "ApplicationGraph",
    "application_graph",
    "applications_ended_before",
    "applications_with_counts",
    "visible_applications",
]
