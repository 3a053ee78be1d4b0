# The two commands of a fresh machine: `make run` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install install-ttra install-gpu lock lock-check chromium run production test lint format worker bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Exactly the locked versions (requirements/, written by `make lock` from pyproject.toml), every
# file checked against its hash, then the project itself without resolving anything again.
# Done once per content of the lock file and pyproject.toml: the hash of both is kept in
# .venv/.installed-<lock file> and a later call with the same hash installs nothing (a restart of
# `make production` is seconds, not a pip run). Installing any lock forgets the other locks'
# stamps (the environment changed under them). REINSTALL=1 installs again regardless.
define locked_install
	@stamp="$$(cat $(1) pyproject.toml | sha256sum | cut -d' ' -f1)"; \
	if [ -z "$(REINSTALL)" ] && [ "$$(cat $(VENV)/.installed-$(notdir $(1)) 2>/dev/null)" = "$$stamp" ]; then \
	  echo "$(1) already installed ($(VENV)/.installed-$(notdir $(1)); REINSTALL=1 to install again)"; \
	else \
	  rm -f $(VENV)/.installed-* && \
	  echo "$(BIN)/pip install -q --require-hashes -r $(1) && $(BIN)/pip install -q --no-deps -e ." && \
	  $(BIN)/pip install -q --require-hashes -r $(1) && $(BIN)/pip install -q --no-deps -e . && \
	  echo "$$stamp" > $(VENV)/.installed-$(notdir $(1)); \
	fi
endef

install: $(BIN)/python
	$(call locked_install,requirements/lock.txt)

# The ttra extra too. Its torch is the CPU build 2.13.0+cpu, which pip finds in its find-links
# folder (/opt/wheels on the lab's machines; elsewhere PIP_FIND_LINKS=https://download.pytorch.org/whl/cpu/torch/).
install-ttra: $(BIN)/python
	$(call locked_install,requirements/lock-ttra.txt)

# TTRA on NVIDIA GPUs (linux x86-64): the gpu extra's lock, PyPI's CUDA build of torch and vLLM for
# rollouts and evaluation (docs/reproduce.md). Needs a CUDA driver; not for CPU-only machines.
install-gpu: $(BIN)/python
	$(call locked_install,requirements/lock-gpu.txt)

# Rewrite the lock files after a change to pyproject.toml's dependencies (requirements/compile).
lock: install
	requirements/compile

# Fails when the lock files and pyproject.toml disagree (part of `make lint`, hence CI).
lock-check: install
	requirements/compile --check

# The browser tests drive Debian's Chromium. Install it where we can (root with apt-get); elsewhere
# the browser tests are skipped with a reason.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; } || \
	  echo "Chromium is not installed: the browser tests will be skipped"

run: install
	$(BIN)/python manage.py prepare_site
	@echo "Open http://$(HOST):$(PORT)/ (staff pages: http://$(HOST):$(PORT)/dashboard/)"
	$(BIN)/daphne -b $(HOST) -p $(PORT) --access-log $(or $(ACCESS_LOG),/dev/null) \
	  --websocket-max-message-size 4194304 --websocket-max-frame-size 4194304 studyapp.asgi:application

# The production topology on one machine (docs/production.md): PostgreSQL and Redis from
# DATABASE_URL and REDIS_URL, WEB daphne processes on PORT, PORT+1, ..., STEPS executors of the
# tables' real-time steps (manage.py run_steps: agents' turns on an event loop), WORKERS Celery workers and
# Celery beat, kept running by supervisord (deploy/supervisord.conf): a process that dies is
# started again and the others go on. DEBUG is off; SECRET_KEY comes from the environment or is
# made once into var/secret_key. `honcho start` runs the same processes from the Procfile for
# development (one exits, all stop). One copy per VAR_DIR: supervisord holds var/production.lock
# (flock) while it runs, and a second `make production` stops with a message; the processes
# supervisord starts die with it (deploy/supervised). A new staff password goes to
# var/staff-password (mode 600), never to the output or the logs. A restart migrates and seeds
# nothing: deploy/prepared.py finds the database as var/prepared says the last start left it
# (one query, no Django); otherwise manage.py prepare_site migrates and seeds what is missing.
# deploy/connections.py sizes daphne's pool to what PostgreSQL can serve beside the other
# processes, or stops with the reason (docs/production.md, "The connection budget").
WEB ?= 2
WORKERS ?= 1
STEPS ?= 1
VAR_DIR ?= $(CURDIR)/var
production: install
	@test -n "$$DATABASE_URL" -a -n "$$REDIS_URL" || { echo "make production needs DATABASE_URL (PostgreSQL) and REDIS_URL"; exit 2; }
	@mkdir -p $(VAR_DIR)
	@flock -n $(VAR_DIR)/production.lock true || { echo "make production is already running for $(VAR_DIR) (supervisord pid $$(cat $(VAR_DIR)/supervisord.pid 2>/dev/null || echo unknown)): stop it first (Ctrl-C in its terminal, or kill that pid)"; exit 1; }
	@$(BIN)/python deploy/prepared.py check $(VAR_DIR)/prepared || { \
	  echo "DEBUG=false VAR_DIR=$(VAR_DIR) $(BIN)/python manage.py prepare_site --password-file $(VAR_DIR)/staff-password" && \
	  DEBUG=false VAR_DIR=$(VAR_DIR) $(BIN)/python manage.py prepare_site --password-file $(VAR_DIR)/staff-password && \
	  $(BIN)/python deploy/prepared.py write $(VAR_DIR)/prepared; }
	@echo "Open http://$(HOST):$(PORT)/ ($(WEB) daphne processes on ports $(PORT) and up, $(STEPS) steps executor(s), $(WORKERS) worker(s), beat)"
	@echo "Processes: VAR_DIR=$(VAR_DIR) $(BIN)/supervisorctl -c deploy/supervisord.conf status"
	@echo "Health: curl -fsS http://$(HOST):$(PORT)/healthz (200 once the database, Redis and a worker answer)"
	@pool="$$(WEB=$(WEB) STEPS=$(STEPS) WORKERS=$(WORKERS) $(BIN)/python deploy/connections.py)" || exit 2; \
	DB_POOL_SIZE=$$pool DEBUG=false HOST=$(HOST) PORT=$(PORT) WEB=$(WEB) STEPS=$(STEPS) WORKERS=$(WORKERS) VAR_DIR=$(VAR_DIR) \
	  flock -n -E 75 $(VAR_DIR)/production.lock $(BIN)/supervisord -n -c deploy/supervisord.conf; \
	  status=$$?; [ $$status != 75 ] || echo "make production is already running for $(VAR_DIR): stop it first"; exit $$status

test: install chromium
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

lint: install lock-check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

worker: install
	$(BIN)/celery -A studyapp worker -l info --without-gossip --without-mingle
