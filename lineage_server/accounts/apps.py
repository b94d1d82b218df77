from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """Agent tokens and, later, users, teams and permissions."""

    name = "lineage_server.accounts"
    label = "accounts"
