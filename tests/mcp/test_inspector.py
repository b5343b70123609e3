"""The MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``, pinned in
tests/mcp/inspector/package.json) against a live server: tools/list without a token, tools/call
with one. Runs when node and npm are present, like the GraphQL-over-HTTP audit."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mcp import oauth_client as oc
from tests.mcp.live import EMAIL, PASSWORD, Live, live_server

HERE = Path(__file__).parent / "inspector"
CLI = HERE / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "index.js"
NODE, NPM = shutil.which("node"), shutil.which("npm")

pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None, reason="node and npm are needed for the MCP Inspector"
)


def install_inspector() -> None:
    """``npm ci`` into tests/mcp/inspector/node_modules (once; gitignored)."""
    if CLI.is_file():
        return
    subprocess.run(
        [str(NPM), "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=HERE,
        check=True,
        capture_output=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def live() -> Iterator[Live]:
    install_inspector()
    with live_server() as server:
        yield server


def inspector(live: Live, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE), str(CLI), f"{live.base}/mcp", "--transport", "http", *args],
        capture_output=True,
        text=True,
        timeout=300,  # a hang guard: Node starting on a loaded machine is slow, not stuck
    )


async def token_for(live: Live) -> str:
    async with httpx.AsyncClient(base_url=live.base) as http:
        tokens: dict[str, Any] = await oc.whole_flow(
            http, EMAIL, PASSWORD, live.org_id, scope="read_documents"
        )
    return str(tokens["access_token"])


def test_inspector_lists_tools_without_a_token(live: Live) -> None:
    listed = inspector(live, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    names = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
    assert {"documents_search", "documents_bulk_edit", "workspace_get_context"} <= names


async def test_inspector_calls_a_tool_with_a_token(live: Live) -> None:
    token = await token_for(live)
    called = inspector(
        live, "--method", "tools/call", "--tool-name", "documents_search",
        "--tool-arg", "limit=2", "--header", f"Authorization: Bearer {token}",
    )  # fmt: skip
    assert called.returncode == 0, called.stderr
    result = json.loads(called.stdout)
    assert result.get("isError") in (None, False), result
    assert result["structuredContent"] == {"documents": [], "nextCursor": None}

    refused = inspector(live, "--method", "tools/call", "--tool-name", "documents_search")
    assert refused.returncode != 0  # no token: 401


def test_inspector_calls_a_tool_with_refs_and_an_api_key(live: Live) -> None:
    """documents_count's schema defines the where clause once in $defs and refers to it; the
    Inspector validates the call against it. An API key in a header works, and ?toolsets=
    narrows the listing."""
    where = '{"conditions":[{"field":"docDate","op":"gte","value":"2026-01-01"}]}'
    key = f"Authorization: Bearer {live.api_key}"
    counted = inspector(
        live, "--method", "tools/call", "--tool-name", "documents_count",
        "--tool-arg", f"where={where}", "--tool-arg", "groupBy=category", "--header", key,
    )  # fmt: skip
    assert counted.returncode == 0, counted.stderr
    result = json.loads(counted.stdout)
    assert result.get("isError") in (None, False), result
    assert result["structuredContent"]["count"] == 0
    listed = subprocess.run(
        [str(NODE), str(CLI), f"{live.base}/mcp?toolsets=files", "--transport", "http",
         "--method", "tools/list"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    names = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
    assert names == {"files_upload", "workspace_get_context"}
