"""The traces a user may see: every read starts from the caller's teams."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from lineage_server.accounts.selectors import teams_for
from lineage_server.tracing.models import Trace


def visible_traces(user: Any) -> QuerySet[Trace]:
    """The traces of applications of ``user``'s teams (another team's are not there at all)."""
    return Trace.objects.filter(application__team__in=teams_for(user))


def trace_history(user: Any) -> QuerySet[Trace]:
    """``visible_traces`` with what the history lists, newest first."""
    return visible_traces(user).select_related("application", "application__team", "created_by")
