from __future__ import annotations

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from lineage_server.api import schema  # noqa: F401  (registers OpenAPI extensions)
from lineage_server.api.views import accounts, catalog, diffs, ingest, provenance, tracing, whatifs

app_name = "api"

router = DefaultRouter()
router.register("applications", catalog.ApplicationViewSet, basename="application")
router.register("datasets", catalog.DatasetViewSet, basename="dataset")
router.register("traces", tracing.TraceViewSet, basename="trace")
router.register("whatifs", whatifs.WhatIfViewSet, basename="whatif")
router.register("diffs", diffs.DiffViewSet, basename="diff")
router.register("history", whatifs.HistoryViewSet, basename="history")
router.register("provenance/graphs", provenance.ProvenanceGraphViewSet, basename="provenance-graph")
router.register("teams", accounts.TeamViewSet, basename="team")
router.register("me/tokens", accounts.PersonalTokenViewSet, basename="personal-token")

app_router = DefaultRouter(trailing_slash=True)
app_router.include_root_view = False
app_router.register("jobs", catalog.JobViewSet, basename="job")
app_router.register("stages", catalog.StageViewSet, basename="stage")
app_router.register("operators", catalog.OperatorViewSet, basename="operator")
app_router.register("datasets", catalog.ApplicationDatasetViewSet, basename="application-dataset")
app_router.register("capture-points", catalog.CapturePointViewSet, basename="capture-point")

team_router = DefaultRouter(trailing_slash=True)
team_router.include_root_view = False
team_router.register("members", accounts.MemberViewSet, basename="member")
team_router.register("agent-tokens", accounts.AgentTokenViewSet, basename="agent-token")
team_router.register("audit", accounts.AuditEventViewSet, basename="audit-event")

urlpatterns = [
    path("v1/ingest/events/", ingest.IngestEventsView.as_view(), name="ingest-events"),
    # Where OpenLineage's HTTP transport posts (its default endpoint, no trailing slash, as Marquez serves it).
    path("v1/lineage", ingest.OpenLineageEventView.as_view(), name="openlineage-event"),
    path("v1/lineage/batch", ingest.OpenLineageBatchView.as_view(), name="openlineage-batch"),
    path("v1/me/", accounts.MeView.as_view(), name="me"),
    path("v1/", include(router.urls)),
    path("v1/teams/<slug:team_slug>/", include(team_router.urls)),
    path("v1/applications/<str:app_id>/", include(app_router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),
]
