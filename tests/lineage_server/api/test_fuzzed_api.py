"""The whole OpenAPI schema (drf-spectacular's, as served at /api/schema/) fuzzed by schemathesis against a
live test server: every operation, with generated valid and malformed requests (ingest, traces,
what-ifs, provenance, accounts), answers without a server error, and what it answers matches the
schema (its body, for a status the schema documents, and its content type).

Examples are bounded (``EXAMPLES`` per operation, 10 unless set, no shrinking) to keep the suite's time small;
``LINEAGE_FUZZ_EXAMPLES`` raises it for a longer run. Requests carry an admin's personal token, and an
agent token on the agent's endpoints (ingest, OpenLineage), so they reach the validation behind auth.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from lineage_server.accounts.services import create_agent_token, create_personal_token, create_team, set_member_role

EXAMPLES = int(os.environ.get("LINEAGE_FUZZ_EXAMPLES", "10"))
AGENT_PATHS = ("/api/v1/ingest/", "/api/v1/lineage")
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


@pytest.fixture(scope="module")
def api_schema(live_server: Any) -> Any:
    return schemathesis.openapi.from_url(f"{live_server.url}/api/schema/?format=json", timeout=120)


@pytest.fixture(scope="module")
def tokens(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, str]]:
    """An admin's personal token and an agent token of one team, made once for the module (a database
    flush per operation would cost more than the fuzzing); the database is flushed at the end."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    with django_db_blocker.unblock():
        team = create_team("fuzz", "Fuzzed team")
        admin = get_user_model().objects.create_user("fuzz-admin", password="a long fuzz password 42")
        set_member_role(team, admin, "admin")
        yield {"personal": create_personal_token(admin, "fuzz")[1], "agent": create_agent_token(team, "fuzz agent")[1]}
        call_command("flush", interactive=False, verbosity=0)


# Triples are uploaded as raw bytes (JSON lines or Parquet): sent as generated, as an octet stream is.
schemathesis.serializer.alias(["application/x-ndjson", "application/vnd.apache.parquet"], "application/octet-stream")
schema = schemathesis.pytest.from_fixture("api_schema")


# Every operation is a subtest of this one test: together they take minutes on a loaded machine
# (PostgreSQL, beside the Spark tests: over the suite's 300 s once).
@pytest.mark.timeout(1200)
@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
def test_no_server_error_and_responses_match_the_schema(case: Any, tokens: dict[str, str], live_server: Any) -> None:
    token = tokens["agent" if case.path.startswith(AGENT_PATHS) else "personal"]
    case.call_and_validate(base_url=live_server.url, headers={"Authorization": f"Bearer {token}"}, checks=CHECKS,
                           timeout=30)
