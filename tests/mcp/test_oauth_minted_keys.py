"""An API key made with an OAuth access token lives as long as the grant behind the token (and
so does a key made with such a key): revoking the grant ends them, at once, cache or not."""

from __future__ import annotations

from typing import Any

import httpx

from persistence.store import Store
from resolvers.framework.auth import GRANT_ENDED
from tests.conftest import Tenant
from tests.mcp import oauth_client as oc
from tests.mcp.conftest import PASSWORD


async def create_key(http: httpx.AsyncClient, credential: str) -> str:
    made = await http.post(
        "/v1/capabilities/api-keys.create",
        json={"name": "made by a client"},
        headers={"Authorization": f"Bearer {credential}"},
    )
    assert made.status_code == 200, made.text
    secret: str = made.json()["data"]["result"]["apiKey"]
    return secret


async def search(http: httpx.AsyncClient, credential: str) -> httpx.Response:
    return await http.post(
        "/v1/capabilities/documents.search",
        json={"limit": 1},
        headers={"Authorization": f"Bearer {credential}"},
    )


async def test_a_key_made_with_a_token_ends_with_the_grant(
    http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    tokens: dict[str, Any] = await oc.whole_flow(
        http, "alice@example.com", PASSWORD, person.org_id, scope="read_documents write_api_keys"
    )
    key = await create_key(http, tokens["access_token"])
    grandchild = await create_key(http, key)
    for credential in (key, grandchild):
        assert (await search(http, credential)).status_code == 200  # and now cached
    record = await store.api_keys.find_active(key)
    assert record is not None and record["restrictedTo"] == person.org_id
    assert record["scopes"] == ["read_documents", "write_api_keys"]

    revoked = await http.post(
        "/v1/oauth/revoke",
        data={"token": tokens["refresh_token"], "client_id": tokens["client_id"]},
    )
    assert revoked.status_code == 200, revoked.text
    for credential in (key, grandchild):
        refused = await search(http, credential)
        assert refused.status_code == 401
        assert refused.json()["error"]["errorMessage"] == GRANT_ENDED
    # Keys not made through the grant stay as they were.
    other = await http.post(
        "/v1/capabilities/documents.search", json={"limit": 1}, headers=person.headers()
    )
    assert other.status_code == 200
