"""OpenAPI extensions: how the schema describes our authentication."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class AgentTokenScheme(OpenApiAuthenticationExtension):
    """Agent tokens are bearer tokens made by ``manage.py create_agent_token``."""

    target_class = "lineage_server.accounts.authentication.AgentTokenAuthentication"
    name = "agentToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "A team's agent token (lat_…), made by a team admin on the team page or with "
                "manage.py create_agent_token --team."
            ),
        }


class PersonalTokenScheme(OpenApiAuthenticationExtension):
    """Personal tokens act as their user; made on the account page or with POST /api/v1/me/tokens/."""

    target_class = "lineage_server.accounts.authentication.PersonalTokenAuthentication"
    name = "personalToken"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "Personal API token (lpt_…), made on /account/tokens/ or with POST /api/v1/me/tokens/.",
        }
