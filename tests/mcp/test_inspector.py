"""The MCP Inspector CLI (npm ``@modelcontextprotocol/inspector``, pinned in
tests/mcp/inspector/package.json) against a live server: tools/list without a token, tools/call
with one. `make install-test` installs it (tests/node_tools.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mcp import oauth_client as oc
from tests.mcp.live import EMAIL, PASSWORD, Live
from tests.node_tools import node_running

HERE = Path(__file__).parent / "inspector"
CLI = HERE / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "index.js"


@pytest.fixture(autouse=True)
def inspector_installed() -> None:
    node_running(CLI)


def inspector(live: Live, *args: str, path: str = "/mcp") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [node_running(CLI), str(CLI), f"{live.base}{path}", "--transport", "http", *args],
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
    listed = inspector(live, "--method", "tools/list", path="/mcp?toolsets=files")
    assert listed.returncode == 0, listed.stderr
    names = {tool["name"] for tool in json.loads(listed.stdout)["tools"]}
    assert names == {"files_upload", "workspace_get_context"}
