# The project's two commands (see README): `make demo` and `make test`.
# Python may keep compiled modules (and pytest its rewritten test modules) in __pycache__ even
# where the shell asks it not to: every `sea` process a test starts, and every pytest worker,
# would compile the whole package again otherwise.
unexport PYTHONDONTWRITEBYTECODE
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check
INPUT ?= Hello! My name is Ken and I love hiking.

.PHONY: demo test test-local test-postgres eval-local test-browser test-otel lint schemas docs venv-test venv-local

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

# Each install leaves a stamp in the virtual environment: the package is installed again only
# when pyproject.toml (its dependencies, its commands) changed; the install is editable, so a
# change to the code needs none.
venv-test: $(VENV)/.installed-test
$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) -e '.[test,workers,mcp,docs,serve,lsp,otel]'
	@touch $@

# The local model: llama-cpp-python compiles from source the first time (about 7 minutes),
# for this machine's CPU, except its AMX tiles: some virtual machines list AMX among the
# CPU's features without letting a process use it, and the first matrix product then dies of
# an illegal instruction. The wheel is built once into LLAMA_WHEELS, named for these flags
# (pip's own wheel cache would hand back a wheel built with other flags).
LLAMA_FLAGS := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
LLAMA_WHEELS ?= $(HOME)/.cache/sea/llama-wheels-native-no-amx
LLAMA_REQ := llama-cpp-python[server]>=0.3,<0.4
venv-local: $(VENV)/.installed-local
$(VENV)/.installed-local: pyproject.toml | $(BIN)/python
	@ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1 || { \
	  echo "Building the local model's runtime (llama-cpp-python) for this CPU: about 8 minutes" \
	    "on 2 cores, once (kept in $(LLAMA_WHEELS)); nothing is printed while it compiles."; \
	  CMAKE_ARGS="-DCMAKE_C_FLAGS='$(LLAMA_FLAGS)' -DCMAKE_CXX_FLAGS='$(LLAMA_FLAGS)'" \
	  $(BIN)/python -m pip wheel --quiet --disable-pip-version-check --no-cache-dir --no-deps \
	  -w $(LLAMA_WHEELS) '$(LLAMA_REQ)'; }
	$(PIP) --find-links $(LLAMA_WHEELS) -e '.[local]'
	@touch $@

lint: venv-test
	$(BIN)/ruff check sea saimemory tests bench dev
	$(BIN)/mypy

# The tests spread over the machine's cores (pytest-xdist): each test has its own store,
# schema and temporary files, so they run in any order and in parallel.
# The tests that need something beyond the project have targets of their own, which .ci/run
# calls: the real local model (test-local), a PostgreSQL server (test-postgres), a browser
# (test-browser) and an OTLP receiver (test-otel).
test: lint
	$(BIN)/python -m pytest -n auto -m "not browser and not otel_receiver and not postgres and not local_model"

# The tests that need a PostgreSQL server (SEA_TEST_POSTGRES_DSN; skipped, saying so, without it):
# the PostgreSQL store, the workers and their queue, several servers on one database.
test-postgres: venv-test
	$(BIN)/python -m pytest -n auto -m postgres

# Regenerate the published JSON Schemas (playbook, trace) after changing a document model.
schemas: venv-test
	$(BIN)/python dev/schemas.py --write

# The documentation site, into site/: strict, so a broken link, a missing page or any
# warning fails the build. The reference pages are generated from the code (dev/docs_reference.py).
docs: venv-test
	NO_MKDOCS_2_WARNING=1 $(BIN)/python -m mkdocs build --strict --site-dir site

# The tests that run the real local model (skipped by `make test` without the extra).
test-local: venv-test venv-local
	$(BIN)/python -m pytest -m local_model

# The routing eval set on the local model (3 repeats: the median counts), compared with the
# committed baseline run: exits 1 when a case that passed there fails now (for CI).
eval-local: venv-test venv-local
	$(BIN)/sea eval evals/routing.yaml --model local --repeat 3 \
	  --baseline evals/baselines/routing-local.json --runs build/evals

# The documentation site in a real browser: built, served on a loopback port, opened in
# Debian's chromium (skipped, saying why, without it); screenshots in build/docs-screenshots/.
test-browser: venv-test
	$(BIN)/python -m pytest -m browser

# A pulse's trace exported over OTLP/HTTP to a real receiver, Arize Phoenix, read back through
# its API. Phoenix (a web app with its own database and pinned dependencies) gets a virtual
# environment of its own, made once, next to the project's.
PHOENIX_VENV ?= $(VENV)-phoenix
$(PHOENIX_VENV)/bin/phoenix:
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/python -m pip install --quiet --disable-pip-version-check 'arize-phoenix>=12'
test-otel: venv-test $(PHOENIX_VENV)/bin/phoenix
	SEA_PHOENIX=$(PHOENIX_VENV)/bin/phoenix $(BIN)/python -m pytest -m otel_receiver

demo: venv-local
	$(BIN)/sea run --input "$(INPUT)"
