"""Fixtures for accounting integrations: fake providers on sockets, the app pointed at them, a
store on the embedded server (originals live in GridFS) with a clock the tests move, and the
worker pool that delivers exports."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from engines.keyring import new_secret_text
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import build_job_kinds
from tests.clock import ManualClock
from tests.conftest import Tenant, app_on, make_tenant
from tests.documents.conftest import doc
from tests.integrations.fakes import (
    CLIENT_ID,
    CLIENT_SECRET,
    FakeQuickBooks,
    FakeXero,
    serving,
)
from tests.outbound import LOOPBACK_FAKES

pytestmark = pytest.mark.wire
ORIGINAL = b"%PDF-1.4 a receipt's original bytes\n%%EOF\n"


@pytest.fixture
def xero() -> Iterator[FakeXero]:
    with serving(FakeXero("xero")) as fake:
        yield fake  # type: ignore[misc]


@pytest.fixture
def quickbooks() -> Iterator[FakeQuickBooks]:
    with serving(FakeQuickBooks("quickbooks")) as fake:
        yield fake  # type: ignore[misc]


@pytest.fixture
def settings(xero: FakeXero, quickbooks: FakeQuickBooks) -> Settings:
    return fake_settings(xero, quickbooks)


def fake_settings(xero: FakeXero, quickbooks: FakeQuickBooks) -> Settings:
    """The server's settings with both providers pointed at the fakes."""
    return Settings(
        public_url="http://fincap.test",
        secret_key=new_secret_text(),
        xero_client_id=CLIENT_ID,
        xero_client_secret=CLIENT_SECRET,
        xero_authorize_url=f"{xero.url}/authorize",
        xero_token_url=f"{xero.url}/token",
        xero_api_url=xero.url,
        quickbooks_client_id=CLIENT_ID,
        quickbooks_client_secret=CLIENT_SECRET,
        quickbooks_authorize_url=f"{quickbooks.url}/authorize",
        quickbooks_token_url=f"{quickbooks.url}/token",
        quickbooks_revoke_url=f"{quickbooks.url}/revoke",
        quickbooks_api_url=quickbooks.url,
        # The fake providers listen on loopback: admitted explicitly, as an operator would.
        outbound_allow=LOOPBACK_FAKES,
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def store(embedded_server: EmbeddedServer, clock: ManualClock) -> AsyncIterator[Store]:
    name = f"acct_{uuid.uuid4().hex[:10]}"
    client, db = connect(embedded_server.uri, name)
    created = Store(db, clock)
    await created.ensure_indexes()
    yield created
    await client.drop_database(name)
    client.close()


@pytest.fixture
async def client(store: Store, settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    app = app_on(store, settings=settings)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        yield http


@pytest.fixture
def workers(store: Store, settings: Settings) -> WorkerPool:
    assert settings.secret_key is not None  # the app's keyring, so its tokens open here
    return WorkerPool(build_services(settings, store), build_job_kinds())


@pytest.fixture
async def alice(store: Store) -> Tenant:
    return await make_tenant(store, "alice@example.com", "Alice Co")


@pytest.fixture
async def bob(store: Store) -> Tenant:
    return await make_tenant(store, "bob@example.com", "Bob Ltd")


async def add_document(store: Store, tenant: Tenant, doc_id: str, **fields: Any) -> None:
    """A processed document with its original in GridFS."""
    file_ref = await store.files.put(
        tenant.org_id, doc_id, ORIGINAL, "receipt-2024.pdf", "application/pdf"
    )
    fields.setdefault("merchant", "Pret A Manger")
    fields.setdefault("amount", Decimal("12.00"))
    fields.setdefault("taxAmount", Decimal("2.00"))
    fields.setdefault("currency", "GBP")
    fields.setdefault("docDate", date(2024, 3, 14))
    fields.setdefault("category", "Meals")
    fields.setdefault("receiptId", "R-0042")
    fields.setdefault("exportStatus", "not-exported")
    await store.documents.writes.insert_many(tenant.org_id, [doc(doc_id, file=file_ref, **fields)])


@dataclass
class Api:
    """Calls as one tenant through REST."""

    http: httpx.AsyncClient
    tenant: Tenant

    async def call(self, slug: str, body: dict[str, Any]) -> httpx.Response:
        return await self.http.post(
            f"/v1/capabilities/{slug}", json=body, headers=self.tenant.headers()
        )

    async def ok(self, slug: str, body: dict[str, Any]) -> Any:
        response = await self.call(slug, body)
        assert response.status_code == 200, response.text
        return response.json()["data"]["result"]

    async def connect(self, integration_id: str) -> dict[str, Any]:
        """The whole OAuth dance: our connect URL → provider consent → our callback."""
        started = await self.http.get(
            f"/v1/integrations/{integration_id}/connect",
            headers={**self.tenant.headers(), "Accept": "application/json"},
        )
        assert started.status_code == 200, started.text
        authorization_url = started.json()["data"]["result"]["authorizationUrl"]
        async with httpx.AsyncClient() as browser:
            consent = await browser.get(authorization_url)
        assert consent.status_code == 302, consent.text
        back = urlsplit(consent.headers["location"])
        assert back.netloc == "fincap.test"
        done = await self.http.get(
            f"{back.path}?{back.query}", headers={"Accept": "application/json"}
        )
        assert done.status_code == 200, done.text
        return dict(done.json()["data"]["result"])

    async def approve(self, waiting: dict[str, Any]) -> Any:
        assert waiting["status"] == "approval_required", waiting
        approved = await self.ok(
            "approvals.approve", {"approvalRequestId": waiting["approvalRequestId"]}
        )
        return approved["result"]


@pytest.fixture
def api(client: httpx.AsyncClient, alice: Tenant) -> Api:
    return Api(client, alice)
