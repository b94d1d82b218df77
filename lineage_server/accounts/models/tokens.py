from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models

from lineage_server.accounts.models.team import Team


def hash_token(raw: str) -> str:
    # Tokens are 256-bit random strings, so a plain SHA-256 is enough (no salt or slow hash needed).
    return hashlib.sha256(raw.encode()).hexdigest()


class HashedToken(models.Model):
    """A bearer token of which only the hash is stored; the raw token is shown once."""

    name = models.CharField(max_length=128)
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise a token in lists.")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class AgentToken(HashedToken):
    """A token capture agents post events with; it writes its team's lineage and nothing else."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="agent_tokens")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta(HashedToken.Meta):
        pass


class PersonalToken(HashedToken):
    """A user's token for API clients; it acts as the user, with the user's roles."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="personal_tokens")

    class Meta(HashedToken.Meta):
        pass
