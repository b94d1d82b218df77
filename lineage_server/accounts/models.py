from __future__ import annotations

import hashlib

from django.db import models


def hash_token(raw: str) -> str:
    # Tokens are 256-bit random strings, so a plain SHA-256 is enough (no salt or slow hash needed).
    return hashlib.sha256(raw.encode()).hexdigest()


class AgentToken(models.Model):
    """A bearer token a capture agent posts events with; only its hash is stored."""

    name = models.CharField(max_length=128)
    prefix = models.CharField(max_length=12, help_text="First characters, to recognise a token in lists.")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
