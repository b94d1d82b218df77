"""Loaded as a pytest plugin (``-p tests._env``) so it runs before Django reads its settings.

It points LINEAGE_VAR_DIR at a fresh temporary folder, keeping the test database, the Celery
broker folder and the secret key out of the developer's var/.
"""
from __future__ import annotations

import os
import tempfile

os.environ.setdefault("LINEAGE_VAR_DIR", tempfile.mkdtemp(prefix="lineage-test-var-"))
# The live test servers speak plain http on loopback, like `make run`.
os.environ.setdefault("LINEAGE_HTTPS", "false")
