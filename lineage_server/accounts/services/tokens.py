"""Writes and lookups of agent tokens (per team) and personal API tokens (per user)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, TypeVar

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from lineage_server.accounts.models import AgentToken, HashedToken, PersonalToken, Team, hash_token
from lineage_server.accounts.services.audit import record_audit

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Recognisable in logs and by secret scanners: "lineage agent token", "lineage personal token".
AGENT_TOKEN_PREFIX = "lat_"
PERSONAL_TOKEN_PREFIX = "lpt_"

T = TypeVar("T", bound=HashedToken)


def _new_raw(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


@transaction.atomic
def create_agent_token(team: Team, name: str, *, by: AbstractBaseUser | str | None = None) -> tuple[AgentToken, str]:
    """Create a token that writes ``team``'s lineage; returns the row and the raw token (never stored)."""
    raw = _new_raw(AGENT_TOKEN_PREFIX)
    user = by if isinstance(by, get_user_model()) else None
    token = AgentToken.objects.create(
        team=team, name=name, prefix=raw[:10], token_hash=hash_token(raw), created_by=user
    )
    record_audit("agent_token.create", actor=by, team=team, target=str(token), token_id=token.pk)
    return token, raw


@transaction.atomic
def create_personal_token(user: User, name: str) -> tuple[PersonalToken, str]:
    """Create an API token acting as ``user``; returns the row and the raw token (never stored)."""
    raw = _new_raw(PERSONAL_TOKEN_PREFIX)
    token = PersonalToken.objects.create(user=user, name=name, prefix=raw[:10], token_hash=hash_token(raw))
    record_audit("personal_token.create", actor=user, team=None, target=str(token), token_id=token.pk)
    return token, raw


@transaction.atomic
def revoke_token(token: T, *, by: AbstractBaseUser | str | None = None) -> T:
    """Revoke an agent or personal token (kept, marked revoked, so lists and the trail still name it)."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        kind = "agent_token" if isinstance(token, AgentToken) else "personal_token"
        team = token.team if isinstance(token, AgentToken) else None
        record_audit(f"{kind}.revoke", actor=by, team=team, target=str(token), token_id=token.pk)
    return token


def find_active_agent_token(raw: str) -> AgentToken | None:
    # At most one row (token_hash is unique): unordered, as first()'s ORDER BY cost 15% of this lookup's CPU,
    # which every ingest request makes.
    found = AgentToken.objects.select_related("team").filter(token_hash=hash_token(raw), revoked_at__isnull=True)
    return next(iter(found.order_by()[:1]), None)


def find_active_personal_token(raw: str) -> PersonalToken | None:
    return (
        PersonalToken.objects.select_related("user")
        .filter(token_hash=hash_token(raw), revoked_at__isnull=True, user__is_active=True)
        .first()
    )


def touch_token(token: HashedToken) -> None:
    """Note a use, at most once a minute (a write per request would serialise agents)."""
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        type(token)._default_manager.filter(pk=token.pk).update(last_used_at=now)
