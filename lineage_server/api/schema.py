"""OpenAPI extensions: how the schema describes our authentication."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class AgentTokenScheme(OpenApiAuthenticationExtension):
    """Agent tokens are bearer tokens made by ``manage.py create_agent_token``."""

    target_class = "lineage_server.accounts.authentication.AgentTokenAuthentication"
    name = "agentToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "Agent token (manage.py create_agent_token)."}
