"""Who may see and do what: the team scoping every read and write goes through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet

from lineage_server.accounts.models import AgentToken, AuditEvent, Membership, PersonalToken, Role, Team

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def is_person(user: Any) -> bool:
    """A logged-in human (session or personal token), as opposed to an agent or an anonymous caller."""
    return bool(getattr(user, "is_authenticated", False)) and hasattr(user, "get_username")


def person(user: Any) -> User:
    """``user`` as the person acting, in code only people reach (behind ``login_required`` or ``IsPerson``).

    Raises:
        PermissionDenied: ``user`` is not a logged-in person (a 403, should such code be reached).
    """
    if not isinstance(user, get_user_model()):
        raise PermissionDenied("Only a logged-in person can do this.")
    return user


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
    """Whether ``user`` holds ``min_role`` or a higher one in ``team``."""
    role = role_in(user, team)
    return role is not None and Role.rank(role) >= Role.rank(min_role)


def role_refusal(user: Any, team: Team, min_role: str) -> str | None:
    """None if ``user`` holds at least ``min_role`` in ``team``; else the refusal shown to them (a 403).

    The one role check of the team pages and of the API's permissions.
    """
    if has_role(user, team, min_role):
        return None
    return f"This needs the {min_role} role in team {team.slug}."


def team_members(team: Team) -> QuerySet[Membership]:
    """``team``'s memberships with their users, by username."""
    return Membership.objects.filter(team=team).select_related("user").order_by("user__username")


def team_agent_tokens(team: Team) -> QuerySet[AgentToken]:
    """``team``'s agent tokens, revoked ones included, newest first."""
    return AgentToken.objects.filter(team=team).select_related("created_by")


def personal_tokens_of(user: Any) -> QuerySet[PersonalToken]:
    """``user``'s personal API tokens, revoked ones included, newest first."""
    return PersonalToken.objects.filter(user=user)


def team_audit_trail(team: Team) -> QuerySet[AuditEvent]:
    """``team``'s audit events, newest first."""
    return AuditEvent.objects.filter(team=team).select_related("team")


def active_user_named(username: str) -> Any | None:
    """The active user with this username, for adding members (a site admin creates users)."""
    return get_user_model().objects.filter(username=username, is_active=True).first()


NO_SUCH_USER = "No active user named {username!r}; a site admin creates users in /admin/."
