from lineage_server.accounts.models.audit import AuditEvent
from lineage_server.accounts.models.team import SLUG_PATTERN, Membership, Role, Team
from lineage_server.accounts.models.tokens import AgentToken, HashedToken, PersonalToken, hash_token

__all__ = [
    "SLUG_PATTERN",
    "AgentToken",
    "HashedToken",
    "AuditEvent",
    "Membership",
    "PersonalToken",
    "Role",
    "Team",
    "hash_token",
]
