from django.apps import AppConfig


class CatalogConfig(AppConfig):
    """Applications, jobs, stages, operators, datasets and capture points."""

    name = "lineage_server.catalog"
    label = "catalog"
