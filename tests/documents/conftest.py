"""Fixtures for the documents resource: a workspace with known documents."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from typing import Any

import httpx
import pymongo
import pytest

from persistence.embedded import EmbeddedServer
from persistence.store import Store
from tests.conftest import Tenant


def doc(doc_id: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "_id": doc_id,
        "merchant": "Shell",
        "amount": Decimal("10.00"),
        "currency": "EUR",
        "docDate": date(2024, 1, 1),
        "category": "Fuel",
        "docType": "receipt",
        "processingStatus": "processed",
        "source": "upload",
    }
    return {**base, **fields}


KNOWN = [
    doc(
        "doc_a",
        merchant="Starbucks",
        amount=Decimal("4.10"),
        category="Meals",
        docDate=date(2024, 1, 5),
        summary="Caffe latte and croissant",
        lineItems=[
            {
                "description": "Caffe Latte",
                "quantity": Decimal(1),
                "unitPrice": Decimal("4.10"),
                "amount": Decimal("4.10"),
                "taxAmount": None,
            }
        ],
        expenseLocation={
            "primary": {
                "countryCode": "US",
                "country": "United States",
                "city": "New York",
                "stateOrProvince": "NY",
                "kind": "in-store",
            }
        },
    ),
    doc(
        "doc_b",
        merchant="Shell",
        amount=Decimal("60.20"),
        docDate=date(2024, 1, 20),
        invoiceId="INV-77",
        docType="invoice",
        isRecurring=False,
    ),
    doc(
        "doc_c", merchant="Shell", amount=Decimal("0.10"), docDate=date(2024, 2, 3), currency="USD"
    ),
    doc(
        "doc_d",
        merchant="Adobe",
        amount=Decimal("59.99"),
        category="Software",
        currency="USD",
        docDate=date(2024, 2, 3),
        isRecurring=True,
        recurringType="monthly",
        docType="invoice",
        exportStatus="exported",
    ),
    doc(
        "doc_e",
        merchant="Starbucks",
        amount=Decimal("0.20"),
        category="Meals",
        docDate=date(2023, 12, 31),
        summary="Cold brew",
    ),
    doc("doc_f", merchant="REWE", amount=None, category="Groceries", docDate=None),
]


@pytest.fixture
async def seeded(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, KNOWN)
    return alice


async def call(
    client: httpx.AsyncClient,
    tenant: Tenant,
    slug: str,
    body: dict[str, Any],
    org: str | None = "self",
) -> httpx.Response:
    return await client.post(f"/v1/capabilities/{slug}", json=body, headers=tenant.headers(org))


def result(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]["result"]


@pytest.fixture(scope="module")
def secantus_collection(embedded_server: EmbeddedServer) -> Iterator[Any]:
    """A documents collection on the embedded server (synchronous pymongo), for the where
    property tests; each example empties it first."""
    client: pymongo.MongoClient = pymongo.MongoClient(embedded_server.uri, tz_aware=True)
    name = f"prop_{uuid.uuid4().hex[:8]}"
    yield client[name]["documents"]
    client.drop_database(name)
    client.close()
