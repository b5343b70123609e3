"""``POST /mcp`` through the ASGI app: tools generated from the registry, the token gate, and
calls through the same ``invoke()`` as REST."""

from __future__ import annotations

import json
from importlib.metadata import version
from typing import Any

import httpx
import pytest

from app.mcp.server import INSUFFICIENT_SCOPE, tool_name
from app.mcp.tools import toolset_of
from app.mcp.toolsets import OPT_IN
from resolvers.framework.registry import Registry
from tests.conftest import Tenant
from tests.mcp import oauth_client as oc
from tests.mcp.conftest import PASSWORD

ACCEPT = {"Accept": "application/json, text/event-stream"}


async def rpc(
    http: httpx.AsyncClient, method: str, params: dict[str, Any] | None = None,
    token: str | None = None,
) -> httpx.Response:  # fmt: skip
    headers = dict(ACCEPT)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        message["params"] = params
    return await http.post("/mcp", json=message, headers=headers)


async def call(http: httpx.AsyncClient, token: str, name: str, **arguments: Any) -> Any:
    response = await rpc(http, "tools/call", {"name": name, "arguments": arguments}, token)
    assert response.status_code == 200, response.text
    return response.json()


def registry_toolsets(registry: Registry) -> set[str]:
    return {toolset_of(spec.slug) for spec in registry}


async def test_open_methods_need_no_token(http: httpx.AsyncClient, registry: Registry) -> None:
    init = await rpc(http, "initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    })  # fmt: skip
    assert init.status_code == 200, init.text
    assert init.json()["result"]["serverInfo"]["name"] == "fincap"
    assert (await rpc(http, "ping")).json()["result"] == {}

    listed = (await rpc(http, "tools/list")).json()["result"]["tools"]
    by_name = {tool["name"]: tool for tool in listed}
    offered = {tool_name(s.slug) for s in registry if toolset_of(s.slug) not in OPT_IN}
    assert set(by_name) == offered | {"workspace_get_context"}
    assert "documents_bulk_edit" in by_name and "documents_search" in by_name
    search = by_name["documents_search"]
    spec = next(s for s in registry if s.slug == "documents.search")
    # The capability's description, naming other capabilities by their tool names.
    assert search["description"].startswith(spec.description.split("\n")[0])
    assert "documents.search" not in json.dumps(listed)
    # Its input schema, compact: the same properties, no titles, the where clause defined once.
    source = spec.input.model_json_schema()
    assert set(search["inputSchema"]["properties"]) == set(source["properties"])
    assert '"title"' not in json.dumps(search["inputSchema"])
    assert set(search["inputSchema"]["$defs"]) == {"WhereClause", "WhereCondition"}
    # Records have no output schema; computed answers (documents_count) do.
    assert "outputSchema" not in search
    assert "preferredTotal" in by_name["documents_count"]["outputSchema"]["properties"]
    assert search["annotations"]["readOnlyHint"] is True
    delete = by_name["documents_delete"]["annotations"]
    # Hints only where they differ from the protocol defaults (not read-only, destructive).
    assert delete.get("readOnlyHint", False) is False and delete.get("destructiveHint", True)
    assert by_name["documents_update"]["annotations"]["destructiveHint"] is False


async def test_tools_call_without_a_token_is_401_with_discovery(
    http: httpx.AsyncClient,
) -> None:
    missing = await rpc(http, "tools/call", {"name": "documents_search", "arguments": {}})
    assert missing.status_code == 401
    challenge = missing.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert (
        'resource_metadata="https://fincap.test/.well-known/oauth-protected-resource/mcp"'
        in challenge
    )
    assert 'scope="read_documents"' in challenge  # what documents_search needs, no more
    wrong = await rpc(http, "tools/call", {"name": "documents_search"}, token="fat_nope")
    assert wrong.status_code == 401
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    # Streamable HTTP without sessions: no GET stream, nothing to DELETE.
    assert (await http.get("/mcp")).status_code == 405
    assert (await http.delete("/mcp")).headers["allow"] == "POST"


async def test_tools_call_runs_invoke_in_the_tokens_workspace(
    http: httpx.AsyncClient, person: Tenant, bob: Tenant, registry: Registry
) -> None:
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    token = tokens["access_token"]

    found = await call(http, token, "documents_search", limit=3)
    result = found["result"]
    assert result["isError"] is False
    assert result["structuredContent"] == {"documents": [], "nextCursor": None}
    assert '"documents": []' in result["content"][0]["text"]

    # A capability failure is a tool result with isError and the same message as REST.
    missing = (await call(http, token, "documents_get", id="doc_nothere"))["result"]
    assert missing["isError"] is True
    rest = await http.post(
        "/v1/capabilities/documents.get", json={"id": "doc_nothere"},
        headers={"Authorization": f"Bearer {token}"},
    )  # fmt: skip
    assert missing["content"][0]["text"] == rest.json()["error"]["errorMessage"]
    # … and the REST envelope's error, reason included, for clients that branch on it.
    assert missing["structuredContent"] == {"error": rest.json()["error"]}
    assert missing["structuredContent"]["error"]["reason"] == "not_found"
    invalid = (await call(http, token, "documents_search", limit=1000))["result"]
    assert invalid["isError"] is True and "limit" in invalid["content"][0]["text"]
    assert invalid["structuredContent"]["error"]["reason"] == "invalid_request"

    # A scope the token lacks: a JSON-RPC error carrying insufficient_scope and the scope.
    convert = await call(http, token, "currency_convert", amount=1, fromCurrency="EUR",
                         toCurrency="USD")  # fmt: skip
    assert convert["error"]["code"] == INSUFFICIENT_SCOPE
    assert "insufficient_scope" in convert["error"]["message"]
    assert convert["error"]["data"] == {
        "error": "insufficient_scope",
        "scope": "read_currency",
        "reason": "missing_scope",
    }

    unknown = await call(http, token, "documents_explode")
    assert unknown["error"]["code"] == -32602  # invalid params

    context = (await call(http, token, "workspace_get_context"))["result"]["structuredContent"]
    assert context["userId"] == person.user_id
    assert context["email"] == "alice@example.com"
    assert context["workspace"] == {"id": person.org_id, "name": "Alice Co", "role": "owner"}
    assert context["scopes"] == ["read_documents", "write_documents"]
    assert context["clientId"] == tokens["client_id"]
    assert context["tokenExpiresAt"] > 0
    # The toolsets this connection is offered (the default ones) and those it may add.
    assert "documents" in context["toolsets"] and "members" not in context["toolsets"]
    assert set(context["moreToolsets"]) == OPT_IN & registry_toolsets(registry)


@pytest.mark.parametrize("protocol", ["2025-06-18", "2025-11-25"])
async def test_the_server_introduces_itself(http: httpx.AsyncClient, protocol: str) -> None:
    init = await rpc(http, "initialize", {
        "protocolVersion": protocol, "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    })  # fmt: skip
    result = init.json()["result"]
    assert result["protocolVersion"] == protocol
    info = result["serverInfo"]
    # The installed package's version, as /healthz shows it (it was empty).
    assert info["name"] == "fincap" and info["version"] == version("fincap") != ""
    assert (await http.get("/healthz")).json()["version"] == info["version"]
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    # Short instructions: what fincap is, how the workspace is chosen, where to start.
    instructions = result["instructions"]
    assert len(instructions) < 1500
    assert "receipts and invoices" in instructions
    assert "X-Service-Org-Id" in instructions and "workspace_get_context" in instructions
    assert "YYYY-MM-DD" in instructions and "ISO 4217" in instructions
