# The two commands: `make run` (set up, start the server and a worker, run the example job)
# and `make test` (set up, run every test). Both are safe to run again.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
JAR := capture_agent/_jars/lineage-listener.jar

.PHONY: run test install frontend jar hook browser lint test-services clean

run: install
	@bash scripts/run.sh

# scripts/test.sh runs the frontend's tests, lint and types beside the Python suite.
test: install browser
	bash scripts/test.sh

install: $(STAMP) frontend/dist/app.js $(JAR) hook

# Re-installs only when the lock file changed.
$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	@touch $(STAMP)

frontend/node_modules/.package-lock.json: frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund

frontend/dist/app.js: frontend/node_modules/.package-lock.json $(wildcard frontend/src/*) frontend/build.mjs
	cd frontend && npm run build

# The JVM half of the listener, compiled against the installed pyspark's jars: again when a Java
# source or the installed packages changed.
jar: $(JAR)

$(JAR): $(STAMP) $(shell find capture_agent/java -name '*.java')
	$(PY) -m capture_agent.build_jar

# spark-submit drivers of the venv's Python start the agent when LINEAGE_RECORDS/LINEAGE_ENABLED is set.
hook: $(STAMP)
	@$(PY) -m capture_agent install-hook >/dev/null

# Browser tests drive Debian's chromium (never a downloaded browser); the compose file is
# validated by Debian's docker-compose (no Docker engine needed).
browser:
	@command -v chromium >/dev/null && command -v docker-compose >/dev/null || { \
	  apt-get update -qq && apt-get install -y -qq chromium docker-compose >/dev/null; }

lint: install
	bash scripts/lint.sh

# The server's tests against PostgreSQL and Redis (CI machines have both running locally).
test-services: install
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/lineage} \
	CELERY_BROKER_URL=$${CELERY_BROKER_URL:-redis://127.0.0.1:6379/5} \
	$(PY) -m pytest tests/lineage_server -q

clean:
	rm -rf frontend/dist var/static
