"""The Django admin: a site admin manages teams; tokens are read-only there and the trail is untouchable."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from lineage_server.accounts.models import AgentToken, AuditEvent, Membership, Team

pytestmark = pytest.mark.django_db


@pytest.fixture
def site_admin(client):
    client.force_login(get_user_model().objects.create_superuser("root", password="a long password 1"))
    return client


@pytest.mark.parametrize("model", ["team", "agenttoken", "personaltoken", "auditevent"])
def test_admin_lists_load(site_admin, agent_token, model):
    assert site_admin.get(f"/admin/accounts/{model}/").status_code == 200


def test_a_team_added_in_the_admin_is_audited_and_administered_by_its_creator(site_admin):
    form = {
        "slug": "ml",
        "name": "ML",
        "memberships-TOTAL_FORMS": "0",
        "memberships-INITIAL_FORMS": "0",
        "memberships-MIN_NUM_FORMS": "0",
        "memberships-MAX_NUM_FORMS": "1000",
    }
    response = site_admin.post("/admin/accounts/team/add/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    team = Team.objects.get(slug="ml")
    assert Membership.objects.get(team=team).user.username == "root"
    assert AuditEvent.objects.filter(team=team, action="team.create", actor_label="root").exists()


def test_tokens_cannot_be_made_or_deleted_in_the_admin_but_can_be_revoked(site_admin, agent_token):
    assert site_admin.get("/admin/accounts/agenttoken/add/").status_code == 403
    token = AgentToken.objects.get()
    response = site_admin.post(
        "/admin/accounts/agenttoken/", {"action": "revoke_selected", "_selected_action": [token.pk]}
    )
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert AuditEvent.objects.filter(action="agent_token.revoke", actor_label="root").exists()
    assert site_admin.get(f"/admin/accounts/auditevent/{AuditEvent.objects.first().pk}/delete/").status_code == 403
