# The project's two commands (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check
INPUT ?= Hello! My name is Ken and I love hiking.

.PHONY: demo test test-local lint schemas venv-test venv-local

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

venv-test: $(BIN)/python
	$(PIP) -e '.[test,workers,mcp]'

# The local model: llama-cpp-python compiles from source the first time (about 7 minutes).
venv-local: $(BIN)/python
	$(PIP) -e '.[local]'

lint: venv-test
	$(BIN)/ruff check sea saimemory tests bench dev
	$(BIN)/mypy

# The tests spread over the machine's cores (pytest-xdist): each test has its own store,
# schema and temporary files, so they run in any order and in parallel.
test: lint
	$(BIN)/python -m pytest -n auto

# Regenerate the published JSON Schemas (playbook, trace) after changing a document model.
schemas: venv-test
	$(BIN)/python dev/schemas.py --write

# The tests that run the real local model (skipped by `make test` without the extra).
test-local: venv-test venv-local
	$(BIN)/python -m pytest -m local_model

demo: venv-local
	$(BIN)/sea run --input "$(INPUT)"
