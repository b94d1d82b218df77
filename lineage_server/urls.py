from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("api/", include("lineage_server.api.urls")),
    path("admin/", admin.site.urls),
    path("", include("lineage_server.web.urls")),
]
