from django.apps import AppConfig


class ProvenanceConfig(AppConfig):
    """Provenance graphs: triples posted by workflow systems or exported from captured runs, the
    CSProv index a Spark job builds over them, and lineage queries that read only what they need."""

    name = "lineage_server.provenance"
    label = "provenance"
