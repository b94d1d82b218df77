"""Production settings: `check --deploy` is clean with DEBUG off, CORS is closed unless opened, headers are set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True)


def test_check_deploy_is_clean_with_debug_off_and_the_default_https_settings(tmp_path):
    # A deployment's environment: none of the test session's own switches (the browser tests set an async one).
    unset = ("LINEAGE_HTTPS", "DEBUG", "SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(LINEAGE_VAR_DIR=str(tmp_path), DEBUG="false")
    done = _manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout
    # and it is not clean by accident: plain http is reported
    env["LINEAGE_HTTPS"] = "false"
    insecure = _manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert insecure.returncode != 0 and "SECURE_SSL_REDIRECT" in insecure.stdout + insecure.stderr


@pytest.mark.django_db
def test_cors_is_closed_by_default(client):
    preflight = client.options(
        "/api/v1/applications/", HTTP_ORIGIN="https://evil.example", HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET"
    )
    assert "Access-Control-Allow-Origin" not in preflight
    assert "Access-Control-Allow-Origin" not in client.get("/api/v1/applications/", HTTP_ORIGIN="https://evil.example")


@pytest.mark.django_db
def test_listed_origins_may_read_the_api_without_cookies(client, settings):
    settings.CORS_ALLOWED_ORIGINS = ["https://dash.example"]
    ok = client.options(
        "/api/v1/applications/", HTTP_ORIGIN="https://dash.example", HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET"
    )
    assert ok["Access-Control-Allow-Origin"] == "https://dash.example"
    assert "Access-Control-Allow-Credentials" not in ok
    assert "DELETE" not in ok["Access-Control-Allow-Methods"]
    other = client.options(
        "/api/v1/applications/", HTTP_ORIGIN="https://evil.example", HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET"
    )
    assert "Access-Control-Allow-Origin" not in other


@pytest.mark.django_db
def test_pages_send_security_headers(client):
    response = client.get("/login/")
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


@pytest.mark.django_db
def test_https_settings_redirect_plain_http_but_not_the_health_check(client, settings):
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/login/").status_code == 301
    assert client.get("/login/", HTTP_X_FORWARDED_PROTO="https").status_code == 200  # behind the TLS proxy
    assert client.get("/healthz").json() == {"status": "ok"}
