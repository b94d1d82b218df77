from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

if TYPE_CHECKING:
    from django.contrib.auth.models import User

SLUG_PATTERN = r"[a-z0-9][a-z0-9-]{0,62}"


class Role(models.TextChoices):
    """What a member may do in a team; each role can do everything the ones before it can."""

    VIEWER = "viewer"  # browse the team's lineage
    ANALYST = "analyst"  # also run traces and what-ifs
    ADMIN = "admin"  # also manage members, agent tokens and deletions

    @classmethod
    def rank(cls, role: str) -> int:
        return [cls.VIEWER, cls.ANALYST, cls.ADMIN].index(cls(role))


class Team(models.Model):
    """A group of users that owns applications (and their capture points, traces and what-ifs)."""

    slug = models.CharField(
        max_length=63,
        unique=True,
        validators=[RegexValidator(rf"^{SLUG_PATTERN}$", "Use lowercase letters, digits and dashes.")],
    )
    name = models.CharField(max_length=128)
    created_at = models.DateTimeField(auto_now_add=True)
    members: models.ManyToManyField[User, Membership] = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams"
    )

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    """A user's role in a team."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["team_id", "user_id"]
        constraints = [models.UniqueConstraint(fields=["team", "user"], name="uniq_membership")]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"
