"""Who may call what: people read their teams' lineage; roles gate the writes."""

from __future__ import annotations

from typing import Any

from rest_framework import permissions

from lineage_server.accounts.models import Role, Team
from lineage_server.accounts.selectors import is_person, role_refusal


class IsPerson(permissions.BasePermission):
    """A logged-in user (session or personal token); agent tokens only post events."""

    message = "Log in, or send a personal API token: Authorization: Bearer lpt_…"

    def has_permission(self, request: Any, view: Any) -> bool:
        return is_person(request.user)


class _RoleInTeam(IsPerson):
    """A person with at least a role in a team (``role_refusal``, shared with the team pages)."""

    def holds(self, user: Any, team: Team, needed: str) -> bool:
        refusal = role_refusal(user, team, needed)
        if refusal is not None:
            self.message = refusal  # the 403 says which role is needed
        return refusal is None


class TeamRole(_RoleInTeam):
    """Writing needs the view's ``write_role`` (admin unless it says) in the object's team.

    Reading needs no check here: querysets hold only the caller's teams, so another team's object
    is a 404, never a 403.
    """

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return self.holds(request.user, view.team_of(obj), getattr(view, "write_role", Role.ADMIN))


class IsSuperuser(IsPerson):
    message = "Only a site administrator (superuser) can do this."

    def has_permission(self, request: Any, view: Any) -> bool:
        return super().has_permission(request, view) and bool(request.user.is_superuser)


class TeamChildRole(_RoleInTeam):
    """For endpoints under /teams/<slug>/: ``read_role`` to read, ``write_role`` to write.

    The view's ``team()`` is a 404 for a team the caller is not in.
    """

    def has_permission(self, request: Any, view: Any) -> bool:
        if not super().has_permission(request, view):
            return False
        if getattr(view, "swagger_fake_view", False):
            return True
        needed = view.read_role if request.method in permissions.SAFE_METHODS else view.write_role
        return self.holds(request.user, view.team(), needed)
