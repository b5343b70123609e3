"""An accounting connection's OAuth ``state`` is accepted once, and only for a user who may
still connect integrations in the workspace (against the fake Xero, on the wire server)."""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant, make_tenant
from tests.integrations.conftest import Api
from tests.integrations.fakes import FakeXero

pytestmark = pytest.mark.wire


async def consented_callback(api: Api) -> str:
    """Start the flow and consent at the provider; the callback URL it sends the browser to."""
    started = await api.http.get(
        "/v1/integrations/xero/connect",
        headers={**api.tenant.headers(), "Accept": "application/json"},
    )
    assert started.status_code == 200, started.text
    async with httpx.AsyncClient() as browser:
        consent = await browser.get(started.json()["data"]["result"]["authorizationUrl"])
    back = urlsplit(consent.headers["location"])
    return f"{back.path}?{back.query}"


async def test_a_state_is_accepted_once(api: Api, store: Store, xero: FakeXero) -> None:
    callback = await consented_callback(api)
    first = await api.http.get(callback, headers={"Accept": "application/json"})
    assert first.status_code == 200, first.text
    replay = await api.http.get(callback, headers={"Accept": "application/json"})
    assert replay.status_code == 400 and "state: already used" in replay.text
    assert await store.db["integration_connections"].count_documents({}) == 1


async def test_a_state_dies_with_the_role_that_made_it(
    api: Api, store: Store, alice: Tenant, xero: FakeXero
) -> None:
    dave = await make_tenant(store, "dave@example.com", "Dave's own")
    await store.workspaces.add_member(alice.org_id, dave.user_id, "admin")
    as_dave = Api(api.http, Tenant(dave.user_id, alice.org_id, dave.api_key))
    callback = await consented_callback(as_dave)
    # Demoted before the browser came back: the connection is not made.
    await store.workspaces.add_member(alice.org_id, dave.user_id, "member")
    late = await api.http.get(callback, headers={"Accept": "application/json"})
    assert late.status_code == 403 and "owners and admins" in late.text
    assert await store.db["integration_connections"].count_documents({}) == 0
