"""Writes on provenance graphs, each a verb function inside a transaction; ``run_index_build`` is the worker's."""

from capture_agent.provenance import TripleError
from lineage_server.provenance.services.builds import BUILD_INDEX_TASK, ask_index_build
from lineage_server.provenance.services.graphs import GraphError, create_graph, delete_graph, update_graph
from lineage_server.provenance.services.run_build import run_index_build
from lineage_server.provenance.services.triples import UploadTooLarge, add_application_triples, add_triples

__all__ = [
    "BUILD_INDEX_TASK",
    "GraphError",
    "TripleError",
    "UploadTooLarge",
    "add_application_triples",
    "add_triples",
    "ask_index_build",
    "create_graph",
    "delete_graph",
    "run_index_build",
    "update_graph",
]
