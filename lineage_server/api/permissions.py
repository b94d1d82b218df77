"""Who may call what: people read their teams' lineage; roles gate the writes."""

from __future__ import annotations

from typing import Any

from rest_framework import permissions

from lineage_server.accounts.models import Role
from lineage_server.accounts.selectors import has_role, is_person


class IsPerson(permissions.BasePermission):
    """A logged-in user (session or personal token); agent tokens only post events."""

    message = "Log in, or send a personal API token: Authorization: Bearer lpt_…"

    def has_permission(self, request: Any, view: Any) -> bool:
        return is_person(request.user)


class TeamRole(IsPerson):
    """Writing needs the view's ``write_role`` (admin unless it says) in the object's team.

    Reading needs no check here: querysets hold only the caller's teams, so another team's object
    is a 404, never a 403.
    """

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        needed = getattr(view, "write_role", Role.ADMIN)
        team = view.team_of(obj)
        self.message = f"This needs the {needed} role in team {team.slug}."
        return has_role(request.user, team, needed)


class IsSuperuser(IsPerson):
    message = "Only a site administrator (superuser) can do this."

    def has_permission(self, request: Any, view: Any) -> bool:
        return super().has_permission(request, view) and bool(request.user.is_superuser)


class TeamChildRole(IsPerson):
    """For endpoints under /teams/<slug>/: ``read_role`` to read, ``write_role`` to write.

    The view's ``team()`` is a 404 for a team the caller is not in.
    """

    def has_permission(self, request: Any, view: Any) -> bool:
        if not super().has_permission(request, view):
            return False
        if getattr(view, "swagger_fake_view", False):
            return True
        safe = request.method in permissions.SAFE_METHODS
        needed = view.read_role if safe else view.write_role
        team = view.team()
        self.message = f"This needs the {needed} role in team {team.slug}."
        return has_role(request.user, team, needed)
