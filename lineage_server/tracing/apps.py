from django.apps import AppConfig


class TracingConfig(AppConfig):
    """Trace requests, their answers and the team's history of them."""

    name = "lineage_server.tracing"
    label = "tracing"
