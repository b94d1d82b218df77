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


class _BearerTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>`` for one kind of token; the other kind gets a 401 saying so."""

    refused_prefix: str
    refused_message: str
    unknown_message: str

    def find(self, raw: str) -> Any:
        raise NotImplementedError

    def principal(self, token: Any) -> Any:
        raise NotImplementedError

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        raw = _bearer(request)
        if raw is None:
            return None
        if raw.startswith(self.refused_prefix):
            raise exceptions.AuthenticationFailed(self.refused_message)
        token = self.find(raw)
        if token is None:
            raise exceptions.AuthenticationFailed(self.unknown_message)
        touch_token(token)
        return self.principal(token), token

    def authenticate_header(self, request: Any) -> str:
        return "Bearer"


class AgentTokenAuthentication(_BearerTokenAuthentication):
    """``Authorization: Bearer lat_…``, a team's agent token; used by the ingest endpoint only."""

    refused_prefix = PERSONAL_TOKEN_PREFIX
    refused_message = "This is a personal token; agents post with a team's agent token."
    unknown_message = "Unknown or revoked agent token."

    def find(self, raw: str) -> AgentToken | None:
        return find_active_agent_token(raw)

    def principal(self, token: AgentToken) -> AgentPrincipal:
        return AgentPrincipal(token)


class PersonalTokenAuthentication(_BearerTokenAuthentication):
    """``Authorization: Bearer lpt_…``, a personal token acting as its user."""

    refused_prefix = AGENT_TOKEN_PREFIX
    refused_message = (
        "Agent tokens only post events to /api/v1/ingest/events/ and /api/v1/lineage; read with a personal token."
    )
    unknown_message = "Unknown or revoked personal token."

    def find(self, raw: str) -> PersonalToken | None:
        return find_active_personal_token(raw)

    def principal(self, token: PersonalToken) -> Any:
        return token.user
