"""Extraction evidence on a document: the same over REST and GraphQL, and a correction
replaces what extraction read."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client
from tests.documents.conftest import call, result
from tests.documents.conftest import seeded as seeded  # a fixture
from tests.graphql.helpers import gql

EVIDENCE = [
    {
        "field": "amount",
        "confidence": 0.93,
        "page": 1,
        "box": [0.6, 0.8, 0.9, 0.84],
        "text": "TOTAL 9.00",
        "source": "amount",
    },
    {
        "field": "docDate",
        "confidence": 0.41,
        "page": 1,
        "box": [0.1, 0.2, 0.4, 0.23],
        "text": "Date 05/03/24",
        "source": "date",
    },
]
QUERY = """
query ($id: String!) {
  documentsGet(input: {id: $id}) {
    document { id evidence { field confidence page box text source } }
  }
}
"""


@pytest.fixture
async def service(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(store, registry) as http:
        yield http


async def test_evidence_is_served_over_rest_and_graphql(
    service: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    record = await store.documents.reads.loaded(seeded.org_id, "doc_a")
    assert record is not None
    await store.documents.writes.update_fields(seeded.org_id, record, {"evidence": EVIDENCE}, [])

    rest = result(await call(service, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert rest["evidence"] == EVIDENCE
    body = await gql(service, QUERY, {"id": "doc_a"}, headers=seeded.headers())
    assert "errors" not in body, body
    assert body["data"]["documentsGet"]["document"]["evidence"] == EVIDENCE


async def test_a_correction_is_certain_and_a_cleared_field_has_no_evidence(
    service: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    record = await store.documents.reads.loaded(seeded.org_id, "doc_a")
    assert record is not None
    await store.documents.writes.update_fields(seeded.org_id, record, {"evidence": EVIDENCE}, [])
    result(await call(service, seeded, "documents.update", {"id": "doc_a", "amount": 9.5}))
    result(await call(service, seeded, "documents.update", {"id": "doc_a", "docDate": None}))
    document = result(await call(service, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert document["evidence"] == [{"field": "amount", "confidence": 1.0, "source": "edited"}]
