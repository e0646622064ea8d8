# mallvi — two commands do everything: `make demo` and `make test`.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.mallvi-setup-done
PYTEST_ARGS ?=

.PHONY: setup demo test lint bench-figures clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt $(wildcard requirements/lock-nodeps.txt) scripts/setup_system.sh \
          scripts/setup_python.sh
	bash scripts/setup_system.sh
	bash scripts/setup_python.sh
	touch $@

demo: setup
	$(BIN)/mallvi demo

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check mallvi tests scripts
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
