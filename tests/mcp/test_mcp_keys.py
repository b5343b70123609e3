"""API keys as bearer credentials on ``/mcp``, with REST's scopes and workspace rules; OAuth
stays the default path (a call without a credential is pointed at the OAuth metadata)."""

from __future__ import annotations

from typing import Any

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.mcp.test_mcp_toolsets import post

RESOURCE_METADATA = "https://fincap.test/.well-known/oauth-protected-resource/mcp"


async def call(
    http: httpx.AsyncClient, name: str, arguments: dict[str, Any] | None = None, **headers: str
) -> dict[str, Any]:
    response = await post(http, "tools/call", {"name": name, "arguments": arguments or {}},
                          **headers)  # fmt: skip
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_an_api_key_is_accepted_in_every_header_rest_takes(
    http: httpx.AsyncClient, alice: Tenant
) -> None:
    for header in (
        {"Authorization": f"Bearer {alice.api_key}"},
        {"X-Service-API-Key": alice.api_key},
        {"x-api-key": alice.api_key},
    ):
        found = await call(http, "documents_search", {"limit": 1}, **header)
        assert found["result"]["structuredContent"] == {"documents": [], "nextCursor": None}
    context = await call(http, "workspace_get_context", Authorization=f"Bearer {alice.api_key}")
    shown = context["result"]["structuredContent"]
    # An unrestricted key of a person with one workspace acts there, as on REST.
    assert shown["credential"] == "api_key" and shown["scopes"] == ["all"]
    assert shown["workspace"] == {"id": alice.org_id, "name": "Alice Co", "role": "owner"}
    assert "tokenExpiresAt" not in shown and "clientId" not in shown


async def test_a_key_of_several_workspaces_names_one_with_x_service_org_id(
    http: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    await store.workspaces.add_member(bob.org_id, alice.user_id, "member")
    bearer = {"Authorization": f"Bearer {alice.api_key}"}
    unnamed = (await call(http, "documents_search", {}, **bearer))["result"]
    assert unnamed["isError"] is True
    text = unnamed["content"][0]["text"]
    assert "X-Service-Org-Id" in text and "workspaces_list" in text  # how to fix the call
    context = (await call(http, "workspace_get_context", **bearer))["result"]
    assert context["structuredContent"]["workspace"] is None
    named = await call(http, "workspace_get_context", **bearer, **{"X-Service-Org-Id": bob.org_id})
    assert named["result"]["structuredContent"]["workspace"]["role"] == "member"
    found = await call(http, "documents_search", {}, **bearer, **{"X-Service-Org-Id": bob.org_id})
    assert found["result"]["isError"] is False


async def test_a_restricted_key_acts_in_its_workspace_only(
    http: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    await store.workspaces.add_member(bob.org_id, alice.user_id, "member")
    secret = "sk_restricted_to_alice_co_0000000000"
    await store.api_keys.create(alice.user_id, secret, restricted_to=alice.org_id)
    bearer = {"Authorization": f"Bearer {secret}"}
    context = (await call(http, "workspace_get_context", **bearer))["result"]
    assert context["structuredContent"]["workspace"]["id"] == alice.org_id
    elsewhere = await call(http, "documents_search", {}, **bearer,
                           **{"X-Service-Org-Id": bob.org_id})  # fmt: skip
    assert elsewhere["result"]["isError"] is True  # refused as REST refuses it
    rest = await http.post(
        "/v1/capabilities/documents.search", json={},
        headers={**bearer, "X-Service-Org-Id": bob.org_id},
    )  # fmt: skip
    assert rest.status_code == 403
    assert elsewhere["result"]["content"][0]["text"] == rest.json()["error"]["errorMessage"]


async def test_a_scoped_key_meets_insufficient_scope(
    http: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    secret = "sk_reads_documents_only_00000000000"
    await store.api_keys.create(alice.user_id, secret, scopes=["read_documents"])
    refused = await call(http, "documents_delete", {"id": "doc_x"},
                         Authorization=f"Bearer {secret}")  # fmt: skip
    assert refused["error"]["data"] == {
        "error": "insufficient_scope",
        "scope": "write_documents",
        "reason": "missing_scope",
    }


async def test_bad_keys_are_401_pointing_at_oauth(
    http: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    unknown = await post(http, "tools/call", {"name": "documents_search", "arguments": {}},
                         Authorization="Bearer sk_not_a_key_of_anyone_0000000000")  # fmt: skip
    assert unknown.status_code == 401
    challenge = unknown.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge
    assert f'resource_metadata="{RESOURCE_METADATA}"' in challenge
    # A revoked key is refused at once, whatever the method (not a smaller listing).
    key = await store.api_keys.find_active(alice.api_key)
    assert key is not None
    await store.api_keys.revoke(alice.user_id, key["_id"])
    revoked = await post(http, "tools/list", Authorization=f"Bearer {alice.api_key}")
    assert revoked.status_code == 401
    # No credential: still the OAuth path, naming what the call needs.
    anonymous = await post(http, "tools/call", {"name": "documents_search", "arguments": {}})
    assert anonymous.status_code == 401
    assert 'scope="read_documents"' in anonymous.headers["www-authenticate"]
    assert "error=" not in anonymous.headers["www-authenticate"]
