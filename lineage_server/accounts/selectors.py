"""Who may see and do what: the team scoping every read and write goes through."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from lineage_server.accounts.models import Membership, Role, Team


def is_person(user: Any) -> bool:
    """A logged-in human (session or personal token), as opposed to an agent or an anonymous caller."""
    return bool(getattr(user, "is_authenticated", False)) and hasattr(user, "get_username")


def teams_for(user: Any) -> QuerySet[Team]:
    """The teams ``user`` is a member of; every team for a superuser, none for agents or anonymous callers."""
    if not is_person(user):
        return Team.objects.none()
    if user.is_superuser:
        return Team.objects.all()
    return Team.objects.filter(memberships__user=user)


def roles_by_team(user: Any) -> dict[int, str]:
    """``user``'s role in each of their teams by team id, in one query (admin of every team for a superuser)."""
    if user.is_superuser:
        return dict.fromkeys(Team.objects.values_list("pk", flat=True), Role.ADMIN.value)
    return dict(Membership.objects.filter(user=user).values_list("team_id", "role"))


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
