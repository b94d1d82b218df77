# Placeholder routes written by the lead so reverse() works; the UI helper owns this module.
from django.urls import path
from django.http import HttpResponse

app_name = "web"

urlpatterns = [
    path("", lambda request: HttpResponse("applications"), name="applications"),
    path("applications/<str:app_id>/", lambda request, app_id: HttpResponse(app_id), name="application"),
]
