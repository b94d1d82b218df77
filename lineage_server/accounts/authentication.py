"""DRF authentication: capture agents by agent token, people by personal token (or session)."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions

from lineage_server.accounts.models import AgentToken, PersonalToken
from lineage_server.accounts.services import (
    AGENT_TOKEN_PREFIX,
    PERSONAL_TOKEN_PREFIX,
    find_active_agent_token,
    find_active_personal_token,
    touch_token,
)


class AgentPrincipal:
    """The authenticated 'user' of an ingest request: an agent of one team, not a person."""

    is_authenticated = True
    is_anonymous = False
    is_superuser = False

    def __init__(self, token: AgentToken) -> None:
        self.token = token

    def __str__(self) -> str:
        return f"agent:{self.token.name}"


def _bearer(request: Any) -> str | None:
    header = authentication.get_authorization_header(request).decode("latin-1")
    if not header:
        return None
    parts = header.split()
    if len(parts) != 2 or parts[0] != "Bearer":
        raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <token>'.")
    return parts[1]


class AgentTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer lat_…``, a team's agent token; used by the ingest endpoint only."""

    def authenticate(self, request: Any) -> tuple[AgentPrincipal, AgentToken] | None:
        raw = _bearer(request)
        if raw is None:
            return None
        if raw.startswith(PERSONAL_TOKEN_PREFIX):
            raise exceptions.AuthenticationFailed("This is a personal token; agents post with a team's agent token.")
        token = find_active_agent_token(raw)
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked agent token.")
        touch_token(token)
        return AgentPrincipal(token), token

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"


class PersonalTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer lpt_…``, a personal token acting as its user."""

    def authenticate(self, request: Any) -> tuple[Any, PersonalToken] | None:
        raw = _bearer(request)
        if raw is None:
            return None
        if raw.startswith(AGENT_TOKEN_PREFIX):
            raise exceptions.AuthenticationFailed(
                "Agent tokens only post events to /api/v1/ingest/events/; read with a personal token."
            )
        token = find_active_personal_token(raw)
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked personal token.")
        touch_token(token)
        return token.user, token

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"
