from __future__ import annotations

from django.urls import path

from lineage_server.web import views

app_name = "web"

urlpatterns = [
    path("", views.applications, name="applications"),
    path("applications/<str:app_id>/", views.application, name="application"),
]
