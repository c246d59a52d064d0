# The project's two commands (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SEA_TEST_POSTGRES_DSN ?=

.PHONY: demo test lint venv-test venv-local

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

venv-test: $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

venv-local: $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[local]'

lint: venv-test
	$(BIN)/ruff check sea saimemory tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

demo: venv-local
	$(BIN)/sea validate playbooks/
