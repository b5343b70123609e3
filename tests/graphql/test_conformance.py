"""GraphQL-over-HTTP conformance: graphql-http's auditServer against a live server."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.graphql.helpers import live_server

HERE = Path(__file__).parent
NODE, NPM = shutil.which("node"), shutil.which("npm")

pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None, reason="node and npm are needed for graphql-http's audit"
)


def install_audit_tools() -> None:
    """Install the pinned graphql-http into tests/graphql/node_modules (once; gitignored)."""
    if (HERE / "node_modules" / "graphql-http" / "package.json").is_file():
        return
    command = "ci" if (HERE / "package-lock.json").is_file() else "install"
    subprocess.run(
        [str(NPM), command, "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=HERE,
        check=True,
        capture_output=True,
        timeout=300,
    )


def test_graphql_over_http_audit_passes() -> None:
    install_audit_tools()
    with live_server() as server:
        completed = subprocess.run(
            [str(NODE), str(HERE / "audit.mjs"), server.url],
            capture_output=True,
            text=True,
            timeout=120,
        )
    results = json.loads(completed.stdout)["results"]
    failed = [r for r in results if r["status"] == "error"]
    assert failed == [], failed  # every MUST
    warned = [r for r in results if r["status"] != "ok"]
    assert warned == [], warned  # and every SHOULD and MAY we chose to support
    assert completed.returncode == 0
    assert len(results) >= 50  # the audit really ran
