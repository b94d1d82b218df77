"""Writes on teams and their members."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lineage_server.accounts.models import Membership, Role, Team
from lineage_server.accounts.services.audit import record_audit

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class MembershipError(ValueError):
    """A change that would leave a team without an administrator, or a similar refusal."""


class AlreadyMemberError(MembershipError):
    """Adding someone who is already a member: adding never changes a role (it could demote the last admin)."""


@transaction.atomic
def create_team(slug: str, name: str = "", *, by: AbstractBaseUser | str | None = None) -> Team:
    """Create a team; a user creating it becomes its first admin."""
    team = Team(slug=slug, name=name or slug)
    team.full_clean()
    team.save()
    record_audit("team.create", actor=by, team=team, target=team.slug)
    if isinstance(by, get_user_model()):
        Membership.objects.create(team=team, user=by, role=Role.ADMIN)
    return team


@transaction.atomic
def set_member_role(
    team: Team, user: User, role: str, *, by: AbstractBaseUser | str | None = None
) -> Membership:
    """Add ``user`` to ``team`` with ``role``, or change their role."""
    role = Role(role)
    membership = Membership.objects.select_for_update().filter(team=team, user=user).first()
    if membership is None:
        membership = Membership.objects.create(team=team, user=user, role=role)
        record_audit("member.add", actor=by, team=team, target=user.get_username(), role=role.value)
        return membership
    if membership.role == role:
        return membership
    if membership.role == Role.ADMIN:
        _keep_an_admin(team, leaving=user)
    previous = membership.role
    membership.role = role
    membership.save(update_fields=["role"])
    record_audit("member.role", actor=by, team=team, target=user.get_username(), role=role.value, previous=previous)
    return membership


@transaction.atomic
def add_member(
    team: Team, user: User, role: str, *, by: AbstractBaseUser | str | None = None
) -> Membership:
    """Add ``user`` to ``team`` with ``role``.

    Raises:
        AlreadyMemberError: ``user`` is already a member (change the role with ``set_member_role``).
    """
    if Membership.objects.select_for_update().filter(team=team, user=user).exists():
        raise AlreadyMemberError(f"{user.get_username()} is already a member of {team.slug}.")
    return set_member_role(team, user, role, by=by)


@transaction.atomic
def remove_member(team: Team, user: User, *, by: AbstractBaseUser | str | None = None) -> None:
    membership = Membership.objects.select_for_update().filter(team=team, user=user).first()
    if membership is None:
        return
    if membership.role == Role.ADMIN:
        _keep_an_admin(team, leaving=user)
    membership.delete()
    record_audit("member.remove", actor=by, team=team, target=user.get_username(), role=membership.role)


def _keep_an_admin(team: Team, leaving: User) -> None:
    admins = Membership.objects.select_for_update().filter(team=team, role=Role.ADMIN).exclude(user=leaving)
    if not admins.exists():
        raise MembershipError(f"{leaving.get_username()} is the last admin of {team.slug}: make another admin first.")
