"""Endpoints of people, teams, members, tokens and the audit trail."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer
from rest_framework.views import APIView

from lineage_server.accounts.models import AgentToken, AuditEvent, Membership, PersonalToken, Role, Team
from lineage_server.accounts.selectors import (
    person,
    personal_tokens_of,
    roles_by_team,
    team_agent_tokens,
    team_audit_trail,
    team_members,
    teams_for,
)
from lineage_server.accounts.services import (
    AlreadyMemberError,
    MembershipError,
    add_member,
    create_agent_token,
    create_personal_token,
    create_team,
    remove_member,
    revoke_token,
    set_member_role,
)
from lineage_server.api.permissions import IsSuperuser, TeamChildRole
from lineage_server.api.serializers import accounts as s


class MeView(APIView):
    """Who you are and your role in each of your teams."""

    @extend_schema(responses=s.MeSerializer)
    def get(self, request: Request) -> Response:
        user = request.user
        teams = s.TeamSerializer(teams_for(user), many=True, context={"roles": roles_by_team(user)}).data
        return Response({"username": user.get_username(), "is_superuser": user.is_superuser, "teams": teams})


class PersonalTokenViewSet(mixins.CreateModelMixin, mixins.DestroyModelMixin, viewsets.ReadOnlyModelViewSet):
    """Your personal API tokens. Send one as ``Authorization: Bearer lpt_…``; DELETE revokes it."""

    serializer_class = s.PersonalTokenSerializer
    queryset = PersonalToken.objects.none()

    def get_queryset(self) -> QuerySet[PersonalToken]:
        if getattr(self, "swagger_fake_view", False):
            return PersonalToken.objects.none()
        return personal_tokens_of(self.request.user)

    @extend_schema(request=s.TokenCreateSerializer, responses={201: s.NewPersonalTokenSerializer})
    def create(self, request: Request) -> Response:
        form = s.TokenCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        token, raw = create_personal_token(person(request.user), form.validated_data["name"])
        token.token = raw  # type: ignore[attr-defined]
        return Response(s.NewPersonalTokenSerializer(token).data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, token: PersonalToken) -> None:
        revoke_token(token, by=person(self.request.user))


class TeamViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Your teams (every team for a site admin). Site admins create teams."""

    serializer_class = s.TeamSerializer
    lookup_field = "slug"
    queryset = Team.objects.none()

    def get_queryset(self) -> QuerySet[Team]:
        return teams_for(self.request.user)

    def get_permissions(self) -> Sequence[Any]:
        return [IsSuperuser()] if self.action == "create" else super().get_permissions()

    def get_serializer_context(self) -> dict[str, Any]:
        context = super().get_serializer_context()
        if not getattr(self, "swagger_fake_view", False) and self.request.user.is_authenticated:
            context["roles"] = roles_by_team(self.request.user)
        return context

    def perform_create(self, serializer: BaseSerializer[Any]) -> None:
        data = serializer.validated_data
        serializer.instance = create_team(data["slug"], data.get("name", ""), by=person(self.request.user))


class _TeamChildViewSet(viewsets.GenericViewSet):
    """Rows under /teams/<slug>/; a team you are not in is a 404."""

    permission_classes = [TeamChildRole]
    read_role: str = Role.VIEWER
    write_role: str = Role.ADMIN

    def team(self) -> Team:
        if not hasattr(self, "_team"):
            self._team = get_object_or_404(teams_for(self.request.user), slug=self.kwargs["team_slug"])
        return self._team


class MemberViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, _TeamChildViewSet):
    """A team's members and their roles (viewer, analyst, admin). Team admins add, change and remove them."""

    serializer_class = s.MembershipSerializer
    lookup_field = "user__username"
    lookup_url_kwarg = "username"
    queryset = Membership.objects.none()

    def get_queryset(self) -> QuerySet[Membership]:
        if getattr(self, "swagger_fake_view", False):
            return Membership.objects.none()
        return team_members(self.team())

    @extend_schema(request=s.MemberAddSerializer, responses={201: s.MembershipSerializer})
    def create(self, request: Request, team_slug: str) -> Response:
        form = s.MemberAddSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        user = form.validated_data["username"]
        try:
            membership = add_member(self.team(), user, form.validated_data["role"], by=person(request.user))
        except AlreadyMemberError:
            raise ValidationError(
                {"username": [f"{user.username} is already a member; PATCH to change the role."]}
            ) from None
        return Response(s.MembershipSerializer(membership).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.MemberRoleSerializer, responses=s.MembershipSerializer)
    def partial_update(self, request: Request, team_slug: str, username: str) -> Response:
        membership = self.get_object()
        form = s.MemberRoleSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            role = form.validated_data["role"]
            membership = set_member_role(self.team(), membership.user, role, by=person(request.user))
        except MembershipError as error:
            raise ValidationError({"role": [str(error)]}) from None
        return Response(s.MembershipSerializer(membership).data)

    def perform_destroy(self, membership: Membership) -> None:
        try:
            remove_member(self.team(), membership.user, by=person(self.request.user))
        except MembershipError as error:
            raise ValidationError({"username": [str(error)]}) from None


class AgentTokenViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, _TeamChildViewSet):
    """A team's agent tokens (team admins only). A token writes this team's lineage; DELETE revokes it."""

    serializer_class = s.AgentTokenSerializer
    read_role = Role.ADMIN
    queryset = AgentToken.objects.none()

    def get_queryset(self) -> QuerySet[AgentToken]:
        if getattr(self, "swagger_fake_view", False):
            return AgentToken.objects.none()
        return team_agent_tokens(self.team())

    @extend_schema(request=s.TokenCreateSerializer, responses={201: s.NewAgentTokenSerializer})
    def create(self, request: Request, team_slug: str) -> Response:
        form = s.TokenCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        token, raw = create_agent_token(self.team(), form.validated_data["name"], by=person(request.user))
        token.token = raw  # type: ignore[attr-defined]
        return Response(s.NewAgentTokenSerializer(token).data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, token: AgentToken) -> None:
        revoke_token(token, by=person(self.request.user))


class AuditEventViewSet(mixins.ListModelMixin, _TeamChildViewSet):
    """A team's audit trail, newest first (team admins only): who captured, deleted, created or revoked what."""

    serializer_class = s.AuditEventSerializer
    read_role = Role.ADMIN
    queryset = AuditEvent.objects.none()

    def get_queryset(self) -> QuerySet[AuditEvent]:
        if getattr(self, "swagger_fake_view", False):
            return AuditEvent.objects.none()
        return team_audit_trail(self.team())
