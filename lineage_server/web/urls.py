from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from lineage_server.web.views import accounts, catalog, health, provenance

app_name = "web"

urlpatterns = [
    path("", catalog.home, name="home"),
    path("applications/", catalog.applications, name="applications"),
    path("applications/<str:app_id>/", catalog.application, name="application"),
    path("applications/<str:app_id>/pipeline/", catalog.pipeline, name="pipeline"),
    path("datasets/<int:pk>/", catalog.dataset, name="dataset"),
    path("history/", catalog.history, name="history"),
    path("provenance/", provenance.graphs, name="provenance-graphs"),
    path("provenance/<int:pk>/", provenance.graph, name="provenance-graph"),
    path("traces/<int:pk>/", catalog.trace, name="trace"),
    path("whatifs/<int:pk>/", catalog.whatif, name="whatif"),
    path("diffs/<int:pk>/", catalog.diff, name="diff"),
    path("healthz", health.healthz, name="healthz"),
    path("login/", auth_views.LoginView.as_view(template_name="web/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("teams/", accounts.teams, name="teams"),
    path("teams/<slug:slug>/", accounts.team, name="team"),
    path("teams/<slug:slug>/members/", accounts.add_member, name="team-add-member"),
    path("teams/<slug:slug>/members/<str:username>/", accounts.change_member, name="team-change-member"),
    path("teams/<slug:slug>/agent-tokens/", accounts.create_team_token, name="team-create-token"),
    path("teams/<slug:slug>/agent-tokens/<int:token_id>/revoke/", accounts.revoke_team_token, name="team-revoke-token"),
    path("account/tokens/", accounts.personal_tokens, name="personal-tokens"),
    path("account/tokens/new/", accounts.create_personal, name="personal-token-create"),
    path("account/tokens/<int:token_id>/revoke/", accounts.revoke_personal, name="personal-token-revoke"),
]
