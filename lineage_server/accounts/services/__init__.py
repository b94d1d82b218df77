"""Writes of the accounts app: teams, members, tokens, and the audit trail they leave."""

from lineage_server.accounts.services.audit import actor_label, record_audit, record_audits
from lineage_server.accounts.services.teams import (
    AlreadyMemberError,
    MembershipError,
    add_member,
    create_team,
    remove_member,
    set_member_role,
)
from lineage_server.accounts.services.tokens import (
    AGENT_TOKEN_PREFIX,
    PERSONAL_TOKEN_PREFIX,
    create_agent_token,
    create_personal_token,
    find_active_agent_token,
    find_active_personal_token,
    revoke_token,
    touch_token,
)

__all__ = [
    "AGENT_TOKEN_PREFIX",
    "PERSONAL_TOKEN_PREFIX",
    "AlreadyMemberError",
    "MembershipError",
    "add_member",
    "actor_label",
    "create_agent_token",
    "create_personal_token",
    "create_team",
    "find_active_agent_token",
    "find_active_personal_token",
    "record_audit",
    "record_audits",
    "remove_member",
    "revoke_token",
    "set_member_role",
    "touch_token",
]
