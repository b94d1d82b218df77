"""Who may see and do what: the team scoping every read and write goes through."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from lineage_server.accounts.models import Membership, Role, Team


def is_person(user: Any) -> bool:
    """A logged-in human (session or personal token), as opposed to an agent or an anonymous caller."""
    return bool(getattr(user, "is_authenticated", False)) and hasattr(user, "get_username")


def teams_for(user: Any, min_role: str = Role.VIEWER) -> QuerySet[Team]:
    """The teams ``user`` holds at least ``min_role`` in; every team for a superuser, none for others."""
    if not is_person(user):
        return Team.objects.none()
    if user.is_superuser:
        return Team.objects.all()
    roles = [r for r in Role if Role.rank(r) >= Role.rank(min_role)]
    return Team.objects.filter(memberships__user=user, memberships__role__in=roles)


def role_in(user: Any, team: Team | int) -> Role | None:
    """``user``'s role in ``team`` (admin for a superuser), or None if not a member."""
    if not is_person(user):
        return None
    if user.is_superuser:
        return Role.ADMIN
    team_id = team if isinstance(team, int) else team.pk
    role = Membership.objects.filter(user=user, team_id=team_id).values_list("role", flat=True).first()
    return Role(role) if role else None


def has_role(user: Any, team: Team | int, min_role: str) -> bool:
    role = role_in(user, team)
    return role is not None and Role.rank(role) >= Role.rank(min_role)


def active_user_named(username: str) -> Any | None:
    """The active user with this username, for adding members (a site admin creates users)."""
    return get_user_model().objects.filter(username=username, is_active=True).first()


NO_SUCH_USER = "No active user named {username!r}; a site admin creates users in /admin/."
