# citeworth: the README's two commands are `make demo` and `make test`.
# Both create ./.venv from requirements.lock on first use. pip byte-compiles it all (about a minute):
# where PYTHONDONTWRITEBYTECODE is set, as on this project's machines, --no-compile cost the demo's
# processes more than it saved (benchmarks/results/demo_phases.json, fresh_clone_no_compile).

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
# pytest-xdist workers of `make test`: most of the suite's time is spent waiting on Airflow, DVC and
# cluster processes, so a 2-core machine keeps more than one worker busy.
TEST_WORKERS ?= 2
# An optional local mirror laid out like ../shared/data (origin path under github/OWNER/REPO/).
# When present it is used instead of the origin URLs; set CITEWORTH_MIRROR= to force downloads.
CITEWORTH_MIRROR ?= $(firstword $(wildcard $(CURDIR)/../shared/data))
export CITEWORTH_MIRROR

.PHONY: setup system-programs demo study test faults docs docs-serve lint bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade "pip>=24"
	$(BIN)/pip install -r requirements.lock
	$(BIN)/pip install --no-deps -e .
	touch $@

# Programs some tests need besides Python packages, as COMMAND:DEBIAN-PACKAGE (the results page's
# browser test: Chromium; the native Airflow cluster: Redis and PostgreSQL, whose initdb Debian keeps
# in /usr/lib/postgresql/VERSION/bin, searched too; the language server's real-editor test: Neovim).
# Installed where we may (root with apt-get: CI, a fresh Debian machine); elsewhere those tests skip
# and say how to install them.
SYSTEM_PROGRAMS := chromium:chromium redis-server:redis-server initdb:postgresql nvim:neovim
system-programs:
	@PATH="$$PATH$$(printf ':%s' /usr/lib/postgresql/*/bin)"; \
	missing=$$(for p in $(SYSTEM_PROGRAMS); do command -v $${p%%:*} >/dev/null || echo $${p#*:}; done); \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing $$missing (apt-get)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

demo: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" ./scripts/demo.sh

# The study at scale (params/study.yaml): every real paper of the mirror, in a workspace of its own,
# results on branch runs/study; within 90 minutes on 2 cores (84.7 from a fresh clone: benchmarks/results/study.json).
study: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" ./scripts/study.sh

test: setup system-programs
	$(BIN)/ruff check citeworth dags plugins tests benchmarks
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=30

# The fault suite on the native Celery cluster (Redis, PostgreSQL, S3, the scheduler, a full disk, a lost
# host, each while real work runs), opt-in: about 35 minutes, past `make test`'s budget. As root (the
# disk fault mounts a small tmpfs); writes benchmarks/results/faults.json.
faults: setup system-programs
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python benchmarks/faults.py

# The documentation site (mkdocs.yml): the reference pages regenerated from the code, then built with
# --strict (a broken link or anchor, or a page outside the nav, fails). `make test` builds it too
# (tests/unit/test_docs.py), and fails where a generated page is stale. Material prints a banner about
# its end of life (May 2027; Zensical is its successor): NO_MKDOCS_2_WARNING keeps the output to the build.
docs: setup
	$(BIN)/python -m citeworth.docs.reference --write
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

docs-serve: setup
	$(BIN)/python -m citeworth.docs.reference --write
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --strict

bench: setup
	$(BIN)/python benchmarks/curation.py

clean:
	rm -rf $(VENV) raw interim data reports/quality/site site
