"""Shared fixtures: an isolated var/ folder, agent tokens, and a helper to post agent events."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest


@pytest.fixture
def agent_token(db: Any) -> str:
    from lineage_server.accounts.services import create_agent_token

    return create_agent_token("test agent")[1]


@pytest.fixture
def api_client() -> Any:
    from rest_framework.test import APIClient

    return APIClient()


PostEvents = Callable[..., Any]


@pytest.fixture
def post_events(api_client: Any, agent_token: str) -> PostEvents:
    """POST a batch of events to the ingest endpoint with a valid token; returns the response."""

    def post(events: list[dict[str, Any]], token: str | None = agent_token) -> Any:
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
        return api_client.post("/api/v1/ingest/events/", {"events": events}, format="json", **headers)

    return post
