"""The npm tools three suites use: graphql-http's conformance audit (tests/graphql) and the MCP
Inspector's CLI (tests/mcp/inspector), run against a live server, and axe-core (tests/web),
injected into the pages the browser tests open.

`make install-test` installs them, never a test: Node.js from Debian when it is missing, then
`npm ci` from the lock file committed beside each suite. A suite whose tool is missing fails
with that instruction instead of skipping, so a run never passes without them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def node_running(tool: Path) -> str:
    """The ``node`` executable, once ``tool`` (a file inside a suite's node_modules) exists."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: run `make install-test`")
    if not tool.is_file():
        pytest.fail(f"{tool} is missing: run `make install-test` (npm ci from the lock file)")
    return node


def npm_file(tool: Path) -> Path:
    """``tool`` (a file inside a suite's node_modules), once it exists."""
    if not tool.is_file():
        pytest.fail(f"{tool} is missing: run `make install-test` (npm ci from the lock file)")
    return tool
