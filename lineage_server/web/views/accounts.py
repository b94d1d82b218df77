"""Team pages (members, agent tokens, audit trail) and the personal token page.

Their JSON twins are under /api/v1/teams/ and /api/v1/me/; both call the same services.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_POST

from lineage_server.accounts.models import Role, Team
from lineage_server.accounts.selectors import (
    has_role,
    person,
    personal_tokens_of,
    role_in,
    role_refusal,
    roles_by_team,
    team_agent_tokens,
    team_audit_trail,
    team_members,
    teams_for,
)
from lineage_server.accounts.services import (
    AlreadyMemberError,
    MembershipError,
    create_agent_token,
    create_personal_token,
    remove_member,
    revoke_token,
    set_member_role,
)
from lineage_server.accounts.services import add_member as add_team_member
from lineage_server.web.forms import MemberForm, RoleForm, TokenForm

AUDIT_ROWS = 100


def _team(request: HttpRequest, slug: str, min_role: str = Role.VIEWER) -> Team:
    """The team if the user is in it (404 otherwise), and holds ``min_role`` in it (403 otherwise)."""
    team = get_object_or_404(teams_for(request.user), slug=slug)
    refusal = role_refusal(request.user, team, min_role)
    if refusal is not None:
        raise PermissionDenied(refusal)
    return team


@login_required
def teams(request: HttpRequest) -> HttpResponse:
    """Your teams; JSON twin ``GET /api/v1/teams/``."""
    roles = roles_by_team(request.user)
    rows = [(team, roles.get(team.pk)) for team in teams_for(request.user)]
    return render(request, "web/teams.html", {"rows": rows, "api_url": reverse("api:team-list")})


@login_required
def team(request: HttpRequest, slug: str, new_token: str = "") -> HttpResponse:
    """A team's members; for its admins also its agent tokens and audit trail."""
    team = _team(request, slug)
    is_admin = has_role(request.user, team, Role.ADMIN)
    context: dict[str, Any] = {
        "team": team,
        "role": role_in(request.user, team),
        "is_admin": is_admin,
        "members": team_members(team),
        "roles": Role.choices,
        "member_form": MemberForm(),
        "token_form": TokenForm(),
        "new_token": new_token,
        "api_url": reverse("api:member-list", kwargs={"team_slug": team.slug}),
    }
    if is_admin:
        context["tokens"] = team_agent_tokens(team)
        context["audit"] = team_audit_trail(team)[:AUDIT_ROWS]
    return render(request, "web/team.html", context)


@login_required
@require_POST
def add_member(request: HttpRequest, slug: str) -> HttpResponse:
    team = _team(request, slug, Role.ADMIN)
    form = MemberForm(request.POST)
    if not form.is_valid():
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
        return redirect("web:team", slug=team.slug)
    user = form.cleaned_data["username"]
    try:
        add_team_member(team, user, form.cleaned_data["role"], by=person(request.user))
        messages.success(request, f"{user.username} is {form.cleaned_data['role']} in {team.slug}.")
    except AlreadyMemberError:
        messages.error(request, f"{user.username} is already a member; change the role in the table.")
    return redirect("web:team", slug=team.slug)


@login_required
@require_POST
def change_member(request: HttpRequest, slug: str, username: str) -> HttpResponse:
    """Change a member's role, or remove them (``remove`` in the form)."""
    team = _team(request, slug, Role.ADMIN)
    user = get_object_or_404(team_members(team), user__username=username).user
    try:
        if "remove" in request.POST:
            remove_member(team, user, by=person(request.user))
            messages.success(request, f"Removed {username} from {team.slug}.")
        else:
            form = RoleForm(request.POST)
            if not form.is_valid():
                messages.error(request, "Choose viewer, analyst or admin.")
            else:
                set_member_role(team, user, form.cleaned_data["role"], by=person(request.user))
                messages.success(request, f"{username} is now {form.cleaned_data['role']}.")
    except MembershipError as error:
        messages.error(request, str(error))
    return redirect("web:team", slug=team.slug)


@login_required
@require_POST
def create_team_token(request: HttpRequest, slug: str) -> HttpResponse:
    """Create an agent token and show it once, in this response only (never stored, never redirected)."""
    team_row = _team(request, slug, Role.ADMIN)
    form = TokenForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give the token a name (up to 128 characters).")
        return redirect("web:team", slug=team_row.slug)
    _, raw = create_agent_token(team_row, form.cleaned_data["name"], by=person(request.user))
    response = team(request, team_row.slug, new_token=raw)
    add_never_cache_headers(response)
    return response


@login_required
@require_POST
def revoke_team_token(request: HttpRequest, slug: str, token_id: int) -> HttpResponse:
    team = _team(request, slug, Role.ADMIN)
    token = get_object_or_404(team_agent_tokens(team), pk=token_id)
    revoke_token(token, by=person(request.user))
    messages.success(request, f"Revoked {token}.")
    return redirect("web:team", slug=team.slug)


@login_required
def personal_tokens(request: HttpRequest, new_token: str = "") -> HttpResponse:
    """Your API tokens; JSON twin ``GET /api/v1/me/tokens/``."""
    return render(
        request,
        "web/personal_tokens.html",
        {
            "tokens": personal_tokens_of(request.user),
            "form": TokenForm(),
            "new_token": new_token,
            "api_url": reverse("api:personal-token-list"),
        },
    )


@login_required
@require_POST
def create_personal(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give the token a name (up to 128 characters).")
        return redirect("web:personal-tokens")
    _, raw = create_personal_token(person(request.user), form.cleaned_data["name"])
    response = personal_tokens(request, new_token=raw)
    add_never_cache_headers(response)
    return response


@login_required
@require_POST
def revoke_personal(request: HttpRequest, token_id: int) -> HttpResponse:
    token = get_object_or_404(personal_tokens_of(request.user), pk=token_id)
    revoke_token(token, by=person(request.user))
    messages.success(request, f"Revoked {token}.")
    return redirect("web:personal-tokens")
