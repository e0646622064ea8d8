# mallvi — two commands do everything: `make demo` and `make test`.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.mallvi-setup-done
LOCAL_MODEL_STAMP := $(VENV)/.mallvi-local-model-done
PYTEST_ARGS ?=

.PHONY: setup demo test lint bench-figures clean

setup: $(STAMP)

$(STAMP): pyproject.toml requirements/lock.txt $(wildcard requirements/lock-nodeps.txt) scripts/setup_system.sh \
          scripts/setup_python.sh
	bash scripts/setup_system.sh
	bash scripts/setup_python.sh
	touch $@

# the tests' local language model (a server built from source): only `make test` waits for it
$(LOCAL_MODEL_STAMP): $(STAMP) scripts/setup_local_model.sh requirements/lock-localmodel.txt \
                      requirements/lock-localmodel-nodeps.txt
	bash scripts/setup_local_model.sh
	touch $@

demo: setup
	$(BIN)/mallvi demo

test: setup $(LOCAL_MODEL_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check mallvi tests scripts
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache
