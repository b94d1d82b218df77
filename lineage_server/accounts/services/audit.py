"""The audit trail: one row per deliberate act on a team's lineage, its members or its tokens."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from lineage_server.accounts.models import AgentToken, AuditEvent, Team


def actor_label(actor: AbstractBaseUser | AgentToken | str | None) -> str:
    """How an actor is shown in the trail: a username, ``agent:<token name>`` or ``command:<name>``."""
    if actor is None:
        return "system"
    if isinstance(actor, str):
        return actor
    if isinstance(actor, AgentToken):
        return f"agent:{actor.name} ({actor.prefix}…)"
    return actor.get_username()


def record_audit(
    action: str,
    *,
    actor: AbstractBaseUser | AgentToken | str | None,
    team: Team | None,
    target: str = "",
    **details: Any,
) -> AuditEvent:
    """Append one event; call it inside the transaction of the act it records."""
    user = actor if isinstance(actor, get_user_model()) else None
    return AuditEvent.objects.create(
        actor=user,
        actor_label=actor_label(actor)[:200],
        team=team,
        action=action,
        target=target[:300],
        details=details,
    )
