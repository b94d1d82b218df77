"""DRF authentication of capture agents by bearer token."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from rest_framework import authentication, exceptions

from lineage_server.accounts.models import AgentToken
from lineage_server.accounts.services import find_active_token


class AgentPrincipal:
    """The authenticated 'user' of an ingest request: an agent, not a person."""

    is_authenticated = True
    is_anonymous = False

    def __init__(self, token: AgentToken) -> None:
        self.token = token

    def __str__(self) -> str:
        return f"agent:{self.token.name}"


class AgentTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Bearer <token>`` with a token made by ``manage.py create_agent_token``."""

    keyword = "Bearer"

    def authenticate(self, request: Any) -> tuple[AgentPrincipal, AgentToken] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if len(parts) != 2 or parts[0] != self.keyword:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <agent token>'.")
        token = find_active_token(parts[1])
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown or revoked agent token.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            AgentToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return AgentPrincipal(token), token

    def authenticate_header(self, request: Any) -> str:
        return self.keyword
