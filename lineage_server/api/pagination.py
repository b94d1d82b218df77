from __future__ import annotations

from django.conf import settings
from rest_framework import pagination
from rest_framework.request import Request


class PageNumberPagination(pagination.PageNumberPagination):
    """``?page=N&page_size=M`` (M up to 500), default size from ``LINEAGE_PAGE_SIZE``."""

    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request: Request) -> int | None:
        self.page_size = settings.LINEAGE["PAGE_SIZE"]
        return super().get_page_size(request)
