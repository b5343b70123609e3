"""Fewer tools on request (``?toolsets=``, ``X-MCP-Toolsets``, read-only) and only the tools
a credential's scopes allow: in the listing, in the prompts offered, and in calls."""

from __future__ import annotations

from typing import Any

import httpx

from app.mcp.tools import tool_name, toolset_of
from app.mcp.toolsets import OPT_IN
from resolvers.framework.registry import Registry
from tests.conftest import Tenant
from tests.mcp import oauth_client as oc
from tests.mcp.conftest import PASSWORD
from tests.mcp.test_mcp_face import ACCEPT

CONTEXT = "workspace_get_context"


async def post(
    http: httpx.AsyncClient, method: str, params: dict[str, Any] | None = None,
    query: str = "", **headers: str,
) -> httpx.Response:  # fmt: skip
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": 7, "method": method}
    if params is not None:
        message["params"] = params
    return await http.post(f"/mcp{query}", json=message, headers={**ACCEPT, **headers})


async def names(http: httpx.AsyncClient, query: str = "", **headers: str) -> set[str]:
    response = await post(http, "tools/list", query=query, **headers)
    assert response.status_code == 200, response.text
    return {tool["name"] for tool in response.json()["result"]["tools"]}


async def test_toolsets_in_the_query_or_a_header_narrow_the_listing(
    http: httpx.AsyncClient, registry: Registry
) -> None:
    everything = await names(http, "?toolsets=all")
    chosen = await names(http, "?toolsets=documents,files")
    assert chosen == {n for n in everything if n.startswith(("documents_", "files_"))} | {CONTEXT}
    assert "files_upload" in chosen and "documents_count" in chosen
    assert "rules_list" not in chosen
    # The header (X-MCP-Toolsets, as the GitHub MCP server's) does the same; both add up.
    assert await names(http, **{"X-MCP-Toolsets": "documents, FILES"}) == chosen
    both = await names(http, "?toolsets=rules", **{"X-MCP-Toolsets": "files"})
    assert both == {n for n in everything if n.startswith(("rules_", "files_"))} | {CONTEXT}
    # A toolset written as tool names write it (api_keys) is the resource (api-keys).
    keys = {n for n in everything if n.startswith("api_keys_")} | {CONTEXT}
    assert (
        await names(http, "?toolsets=api_keys") == await names(http, "?toolsets=api-keys") == keys
    )


async def test_the_default_listing_leaves_the_opt_in_toolsets_out(
    http: httpx.AsyncClient, registry: Registry, alice: Tenant
) -> None:
    everything = await names(http, "?toolsets=all")
    default = await names(http)
    opt_in = {tool_name(s.slug) for s in registry if toolset_of(s.slug) in OPT_IN}
    assert {"members_invite", "api_keys_create", "billing_get"} <= opt_in
    # Statements, transactions and matches are one toolset, reconcile, named as a group.
    assert {"statements_import", "transactions_search", "matches_confirm"} <= opt_in
    reconcile = await names(http, "?toolsets=reconcile")
    assert {n for n in reconcile if n != CONTEXT} == {
        n for n in everything if n.startswith(("statements_", "transactions_", "matches_"))
    }
    assert default == everything - opt_in
    # `default` names the default toolsets, so one opt-in toolset is added to them by name.
    members = {n for n in everything if n.startswith("members_")}
    assert await names(http, "?toolsets=default,members") == default | members
    assert await names(http, "?toolsets=default") == default
    # A call to an opt-in tool on a default connection says how to connect for it.
    bearer = {"Authorization": f"Bearer {alice.api_key}"}
    call = {"name": "members_list", "arguments": {}}
    refused = (await post(http, "tools/call", call, **bearer)).json()["error"]
    assert refused["code"] == -32602
    assert "?toolsets=default,members" in refused["message"]
    ran = await post(http, "tools/call", call, "?toolsets=default,members", **bearer)
    assert ran.json()["result"]["isError"] is False


async def test_an_unknown_toolset_is_a_clear_error(http: httpx.AsyncClient) -> None:
    response = await post(http, "tools/list", query="?toolsets=documents,receipts")
    assert response.status_code == 400
    error = response.json()
    assert error["id"] == 7 and error["error"]["code"] == -32602
    message = error["error"]["message"]
    assert "Unknown toolset 'receipts'" in message
    assert "documents" in message and "files" in message and "rules" in message  # the known
    bad_flag = await post(http, "tools/list", **{"X-MCP-Readonly": "maybe"})
    assert bad_flag.status_code == 400 and "true or false" in bad_flag.text


async def test_readonly_lists_only_reads(http: httpx.AsyncClient, registry: Registry) -> None:
    reads = await names(http, "?readonly=true")
    # Read-only narrows the default toolsets (the opt-in ones are left out as without it).
    expected = {tool_name(s.slug) for s in registry if s.read_only}
    opt_in = {tool_name(s.slug) for s in registry if toolset_of(s.slug) in OPT_IN}
    assert reads == (expected - opt_in) | {CONTEXT}
    assert await names(http, "?readonly=true&toolsets=all") == expected | {CONTEXT}
    assert "documents_search" in reads and "documents_update" not in reads


async def test_a_call_outside_the_selection_says_how_to_add_it(
    http: httpx.AsyncClient, alice: Tenant
) -> None:
    bearer = {"Authorization": f"Bearer {alice.api_key}"}
    call = {"name": "rules_list", "arguments": {}}
    refused = await post(http, "tools/call", call, "?toolsets=documents", **bearer)
    assert refused.status_code == 200
    error = refused.json()["error"]
    assert error["code"] == -32602
    assert "toolset 'rules'" in error["message"] and "?toolsets=" in error["message"]
    write = {"name": "documents_delete", "arguments": {"id": "doc_x"}}
    read_only = await post(http, "tools/call", write, "?readonly=1", **bearer)
    assert "read-only" in read_only.json()["error"]["message"]
    # Inside the selection, the call runs.
    ran = await post(http, "tools/call", call, "?toolsets=rules", **bearer)
    assert ran.json()["result"]["isError"] is False


async def test_a_token_lists_only_the_tools_its_scopes_allow(
    http: httpx.AsyncClient, person: Tenant
) -> None:
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id,
                                 scope="read_documents")  # fmt: skip
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
    allowed = await names(http, **bearer)
    assert {"documents_search", "documents_get", "documents_count", CONTEXT} <= allowed
    # Writes need write_documents; other areas need their own scopes.
    assert not allowed & {"documents_update", "files_upload", "currency_convert", "rules_list"}
    # Prompts are offered when all their tools are: review_spend reads only.
    prompts = (await post(http, "prompts/list", **bearer)).json()["result"]["prompts"]
    assert [prompt["name"] for prompt in prompts] == ["review_spend"]
    # Without a credential the listing is everything a full-scope credential may call.
    assert "currency_convert" in await names(http)
    everyone = (await post(http, "prompts/list")).json()["result"]["prompts"]
    assert {p["name"] for p in everyone} == {"review_spend", "unexported_receipts",
                                              "check_document"}  # fmt: skip


async def test_a_scoped_api_key_lists_what_its_scopes_allow(
    http: httpx.AsyncClient, store: Any, alice: Tenant
) -> None:
    secret = "sk_scoped_currency_only_000000000000"
    await store.api_keys.create(alice.user_id, secret, scopes=["read_currency"])
    listed = await names(http, Authorization=f"Bearer {secret}")
    assert "currency_convert" in listed and "documents_search" not in listed


async def test_the_selection_narrows_resources_and_prompts_too(
    http: httpx.AsyncClient, alice: Tenant
) -> None:
    """The probe's Low item: ``?toolsets=`` and read-only narrowed tools/list and tools/call but
    not the documents' resources nor prompts/get. Resources are documents_get's reads: offered
    with the documents toolset only. A prompt is got only where its tools are offered."""
    bearer = {"Authorization": f"Bearer {alice.api_key}"}
    uri = {"uri": "fincap://documents/doc_1"}
    templates = await post(http, "resources/templates/list", {}, "?toolsets=rules", **bearer)
    assert templates.json()["result"]["resourceTemplates"] == []
    listed = await post(http, "resources/list", {}, "?toolsets=rules", **bearer)
    assert listed.json()["result"]["resources"] == []
    read = (await post(http, "resources/read", uri, "?toolsets=rules", **bearer)).json()
    assert read["error"]["code"] == -32602 and "toolsets" in read["error"]["message"]
    # With the documents toolset, the same read reaches the capability (not found: no such id).
    found = (await post(http, "resources/read", uri, "?toolsets=documents", **bearer)).json()
    assert "doc_1" in found["error"]["message"] and "toolsets" not in found["error"]["message"]

    spend = {"name": "review_spend", "arguments": {"month": "2026-02"}}
    refused = (await post(http, "prompts/get", spend, "?toolsets=rules")).json()
    assert refused["error"]["code"] == -32602
    assert "documents_count" in refused["error"]["message"]
    assert "result" in (await post(http, "prompts/get", spend, "?toolsets=documents")).json()
    # check_document walks through documents_update, which a read-only connection is not offered.
    check = {"name": "check_document", "arguments": {"documentId": "doc_1"}}
    read_only = (await post(http, "prompts/get", check, "?readonly=true")).json()
    assert "documents_update" in read_only["error"]["message"]
    assert "result" in (await post(http, "prompts/get", spend, "?readonly=true")).json()
