"""GraphQL-over-HTTP conformance: graphql-http's auditServer against a live server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.graphql.helpers import LiveServer
from tests.node_tools import node_running

HERE = Path(__file__).parent
AUDIT = HERE / "node_modules" / "graphql-http" / "package.json"


def test_graphql_over_http_audit_passes(graphql_live: LiveServer) -> None:
    node = node_running(AUDIT)
    server = graphql_live
    completed = subprocess.run(
        [node, str(HERE / "audit.mjs"), server.url],
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
