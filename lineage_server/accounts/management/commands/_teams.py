from __future__ import annotations

from django.core.management.base import CommandError

from lineage_server.accounts.models import Team


def team_by_slug(slug: str) -> Team:
    team = Team.objects.filter(slug=slug).first()
    if team is None:
        known = ", ".join(Team.objects.values_list("slug", flat=True)) or "none yet: manage.py create_team"
        raise CommandError(f"No team {slug!r} (teams: {known}).")
    return team
