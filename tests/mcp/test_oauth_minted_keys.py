"""An API key made with a third-party client's OAuth access token lives as long as the grant
behind the token (and so does a key made with such a key): revoking the grant ends them, at
once, cache or not. A key made in the dashboard (the first-party client) belongs to the person
and outlives the sign-in it was made in."""

from __future__ import annotations

from typing import Any

import httpx
from starlette.applications import Starlette

from persistence.store import Store
from resolvers.framework.auth import GRANT_ENDED
from resolvers.services.auth.oauth_first_party import DASHBOARD_CLIENT_ID
from tests.conftest import Tenant
from tests.mcp import oauth_client as oc
from tests.mcp import test_oauth_dashboard_client as dashboard
from tests.mcp.conftest import PASSWORD
from tests.mcp.test_oauth_dashboard_client import browser


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


async def test_a_key_made_in_the_dashboard_outlives_its_sign_in(
    app: Starlette, http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    """The dashboard is the person, not a client acting for them: signing out (the dashboard
    revokes its grant) leaves the keys they made there working, with their origin recorded and
    the scopes their role allows."""
    async with browser(app) as tab:
        _, tokens = await dashboard.sign_in(tab, person.org_id)
        key = await create_key(tab, tokens["access_token"])
        signed_out = await tab.post(
            "/v1/oauth/revoke",
            data={"token": tokens["refresh_token"], "client_id": DASHBOARD_CLIENT_ID},
        )
    assert signed_out.status_code == 200
    assert (await search(http, tokens["access_token"])).status_code == 401  # the session ended
    assert (await search(http, key)).status_code == 200  # the key did not
    record = await store.api_keys.find_active(key)
    assert record is not None and "grantFamily" not in record
    assert record["origin"] == "dashboard" and record["scopes"] == ["all"]  # alice owns it
    listed = await http.post("/v1/capabilities/api-keys.list", json={}, headers=person.headers())
    mine = next(k for k in listed.json()["data"]["result"]["keys"] if k["id"] == record["_id"])
    assert mine["origin"] == "dashboard" and mine["endsWithGrant"] is False
    assert mine["lastUsedAt"] is not None


async def test_a_third_party_key_records_the_client_by_name(
    http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    tokens: dict[str, Any] = await oc.whole_flow(
        http, "alice@example.com", PASSWORD, person.org_id, scope="read_documents write_api_keys"
    )
    key = await create_key(http, tokens["access_token"])
    record = await store.api_keys.find_active(key)
    assert record is not None
    assert (record["origin"], record["originName"]) == ("oauth", "Test Assistant")
    assert record["grantFamily"]


async def test_the_dashboard_lists_and_revokes_the_bootstrap_key(
    app: Starlette, http: httpx.AsyncClient, person: Tenant
) -> None:
    """The bootstrap key acts in every workspace; a third-party token bound to one workspace
    never sees it, but the person in the dashboard does and can revoke it (seen missing from
    the list on the old code)."""
    async with browser(app) as tab:
        _, tokens = await dashboard.sign_in(tab, person.org_id)
    session = {"Authorization": f"Bearer {tokens['access_token']}"}
    listed = await http.post("/v1/capabilities/api-keys.list", json={}, headers=session)
    keys = listed.json()["data"]["result"]["keys"]
    bootstrap = next(k for k in keys if k["name"] == "bootstrap")
    assert bootstrap["origin"] == "bootstrap" and bootstrap["restrictedTo"] is None
    revoked = await http.post(
        "/v1/capabilities/api-keys.revoke", json={"id": bootstrap["id"]}, headers=session
    )
    assert revoked.status_code == 200, revoked.text
    assert (await search(http, person.api_key)).status_code == 401
