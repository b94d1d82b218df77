from django.apps import AppConfig


class WebConfig(AppConfig):
    """The browser UI's pages."""

    name = "lineage_server.web"
    label = "web"
