"""Writes on agent tokens."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.utils import timezone

from lineage_server.accounts.models import AgentToken, hash_token

TOKEN_PREFIX = "lat_"  # "lineage agent token": recognisable in logs and secret scanners


@transaction.atomic
def create_agent_token(name: str) -> tuple[AgentToken, str]:
    """Create a token; returns the row and the raw token, which is never stored nor shown again."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = AgentToken.objects.create(name=name, prefix=raw[:10], token_hash=hash_token(raw))
    return token, raw


@transaction.atomic
def revoke_agent_token(token: AgentToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def find_active_token(raw: str) -> AgentToken | None:
    return AgentToken.objects.filter(token_hash=hash_token(raw), revoked_at__isnull=True).first()
