# citeworth: the README's two commands are `make demo` and `make test`.
# Both create ./.venv from requirements.lock on first use.

PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
# An optional local mirror laid out like ../shared/data (origin path under github/OWNER/REPO/).
# When present it is used instead of the origin URLs; set CITEWORTH_MIRROR= to force downloads.
CITEWORTH_MIRROR ?= $(firstword $(wildcard $(CURDIR)/../shared/data))
export CITEWORTH_MIRROR

.PHONY: setup demo test lint bench clean

setup: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON) (set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade "pip>=24"
	$(BIN)/pip install -r requirements.lock
	$(BIN)/pip install --no-deps -e .
	touch $@

demo: setup
	PATH="$(CURDIR)/$(BIN):$$PATH" ./scripts/demo.sh

test: setup
	$(BIN)/ruff check citeworth dags plugins tests benchmarks
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q

bench: setup
	$(BIN)/python benchmarks/curation.py

clean:
	rm -rf $(VENV) raw interim data reports/quality/site
