"""Serializers of teams, members, tokens and the audit trail."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework import serializers

from lineage_server.accounts.models import AgentToken, AuditEvent, Membership, PersonalToken, Role, Team
from lineage_server.accounts.selectors import NO_SUCH_USER, active_user_named, role_in

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class TeamSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField(help_text="Your role in the team.")

    class Meta:
        model = Team
        fields = ["slug", "name", "created_at", "role"]
        read_only_fields = ["created_at"]

    def get_role(self, team: Team) -> str | None:
        roles: dict[int, str] = self.context.get("roles", {})
        if team.pk in roles:
            return roles[team.pk]
        request = self.context.get("request")  # a team made in this request is not in the roles yet
        role = role_in(request.user, team) if request is not None else None
        return role.value if role else None


class MembershipSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Membership
        fields = ["username", "role", "created_at"]
        read_only_fields = ["created_at"]


class MemberAddSerializer(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices, default=Role.VIEWER)

    def validate_username(self, value: str) -> object:
        user = active_user_named(value)
        if user is None:
            raise serializers.ValidationError(NO_SUCH_USER.format(username=value))
        return user


class MemberRoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class TokenCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=128, help_text="What the token is for, e.g. a job or a pipeline.")


class AgentTokenSerializer(serializers.ModelSerializer):
    active = serializers.BooleanField(source="is_active", read_only=True)
    created_by: serializers.SlugRelatedField[User] = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = AgentToken
        fields = ["id", "name", "prefix", "active", "created_at", "created_by", "last_used_at", "revoked_at"]


class PersonalTokenSerializer(serializers.ModelSerializer):
    active = serializers.BooleanField(source="is_active", read_only=True)

    class Meta:
        model = PersonalToken
        fields = ["id", "name", "prefix", "active", "created_at", "last_used_at", "revoked_at"]


class NewAgentTokenSerializer(AgentTokenSerializer):
    token = serializers.CharField(read_only=True, help_text="The raw token: shown in this answer only.")

    class Meta(AgentTokenSerializer.Meta):
        fields = [*AgentTokenSerializer.Meta.fields, "token"]


class NewPersonalTokenSerializer(PersonalTokenSerializer):
    token = serializers.CharField(read_only=True, help_text="The raw token: shown in this answer only.")

    class Meta(PersonalTokenSerializer.Meta):
        fields = [*PersonalTokenSerializer.Meta.fields, "token"]


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_label")
    team: serializers.SlugRelatedField[Team] = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "actor", "team", "action", "target", "details"]


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    is_superuser = serializers.BooleanField()
    teams = TeamSerializer(many=True)
