"""Django admin for site administrators: teams and members; tokens and the trail read-only.

Tokens are made where their raw value can be shown once (team page, API, command), never here.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from lineage_server.accounts.models import AgentToken, AuditEvent, Membership, PersonalToken, Team
from lineage_server.accounts.selectors import person
from lineage_server.accounts.services import create_team, revoke_token


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ["user"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "created_at"]
    search_fields = ["slug", "name"]
    inlines = [MembershipInline]

    def save_model(self, request: HttpRequest, obj: Team, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
        else:  # through the service: audited, and its creator becomes its admin
            form.instance = create_team(obj.slug, obj.name, by=person(request.user))


@admin.action(description="Revoke the selected tokens")
def revoke_selected(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Any]) -> None:
    for token in queryset:
        revoke_token(token, by=person(request.user))


class _TokenAdmin(admin.ModelAdmin):
    list_filter = ["revoked_at"]
    search_fields = ["name", "prefix"]
    actions = [revoke_selected]
    readonly_fields = ["name", "prefix", "created_at", "last_used_at", "revoked_at"]
    exclude = ["token_hash"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoke instead: the trail and lists keep naming the token


@admin.register(AgentToken)
class AgentTokenAdmin(_TokenAdmin):
    list_display = ["name", "prefix", "team", "created_by", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = [*_TokenAdmin.readonly_fields, "team", "created_by"]


@admin.register(PersonalToken)
class PersonalTokenAdmin(_TokenAdmin):
    list_display = ["name", "prefix", "user", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = [*_TokenAdmin.readonly_fields, "user"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["at", "actor_label", "team", "action", "target"]
    list_filter = ["action", "team"]
    search_fields = ["actor_label", "target"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
