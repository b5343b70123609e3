"""The accounting connectors under the outbound policy: their configured URLs get no exception.
A provider on a private address the allow-list does not name is never called; the connection
fails with the one sentence and nothing is stored. (The other tests admit the fakes through
FINCAP_OUTBOUND_ALLOW, as an operator would.)"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant, app_on
from tests.integrations.conftest import fake_settings
from tests.integrations.fakes import FakeQuickBooks, FakeXero

pytestmark = pytest.mark.wire


async def test_a_provider_the_policy_does_not_admit_is_never_called(
    store: Store, alice: Tenant, xero: FakeXero, quickbooks: FakeQuickBooks
) -> None:
    settings = fake_settings(xero, quickbooks).model_copy(update={"outbound_allow": None})
    app = app_on(store, settings=settings)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://fincap.test"
    ) as http:
        started = await http.get(
            "/v1/integrations/xero/connect",
            headers={**alice.headers(), "Accept": "application/json"},
        )
        assert started.status_code == 200, started.text
        # The user's browser, not the server, goes to the consent page.
        async with httpx.AsyncClient() as browser:
            consent = await browser.get(started.json()["data"]["result"]["authorizationUrl"])
        back = urlsplit(consent.headers["location"])
        done = await http.get(f"{back.path}?{back.query}", headers={"Accept": "application/json"})
    assert done.status_code == 502, done.text
    port = urlsplit(xero.url).port
    assert done.json()["error"]["errorMessage"] == (
        f"Xero: token request: could not connect to 127.0.0.1:{port}"
    )
    assert len(xero.codes) == 1  # the code was never exchanged
    assert xero.access == {} and xero.calls == []
    assert await store.db["integration_connections"].count_documents({}) == 0
