"""In GraphQL the selection is the output mode: every selected document field resolves without
outputMode, and only the selected fields are read from the store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest

from persistence.documents.reads import DocumentReads
from persistence.documents.records import stored_path
from persistence.store import Store
from resolvers.framework.registry import Registry
from schema.documents import COMPACT_FIELDS
from tests.conftest import Tenant, asgi_client
from tests.documents.conftest import doc
from tests.documents.conftest import seeded as seeded  # a fixture
from tests.graphql.helpers import gql

EVERYTHING_SELECTED = """
fragment Paid on Document { paymentMethod paymentMethodEnding }
{
  documentsSearch(input: {useSearch: false, limit: 1}) {
    documents {
      id summary date link ...Paid
      lineItems { description amount }
      ... on Document { file { fileName url } expenseLocation { primary { city } } }
      editHistory { field newValue }
    }
  }
  workspace {
    documents(input: {useSearch: false, limit: 1}) { documents { summary paymentMethod } }
  }
}
"""


@pytest.fixture
async def service(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(store, registry) as http:
        yield http


@pytest.fixture
async def newest(store: Store, seeded: Tenant) -> str:
    """A document newer than the seeded ones with the fields compact output leaves out."""
    await store.documents.writes.insert_many(
        seeded.org_id,
        [
            doc(
                "doc_new",
                docDate=date(2024, 3, 1),
                summary="Fuel and a coffee",
                paymentMethod="card",
                paymentMethodEnding="4242",
                lineItems=[
                    {
                        "description": "Diesel",
                        "quantity": Decimal(1),
                        "unitPrice": Decimal("10.00"),
                        "amount": Decimal("10.00"),
                        "taxAmount": None,
                    }
                ],
                expenseLocation={"primary": {"city": "Berlin", "countryCode": "DE"}},
                file={
                    "gridfsId": "f1",
                    "fileName": "fuel.jpg",
                    "mimeType": "image/jpeg",
                    "size": 10,
                    "sha256": "0" * 64,
                },
            )
        ],
    )
    record = await store.documents.reads.loaded(seeded.org_id, "doc_new")
    assert record is not None
    edit = {
        "field": "merchant",
        "oldValue": "Shell",
        "newValue": "Shell Express",
        "editedBy": seeded.user_id,
        "editedAt": datetime(2024, 3, 2, tzinfo=UTC),
        "via": "documents.update",
    }
    await store.documents.writes.update_fields(
        seeded.org_id, record, {"merchant": "Shell Express"}, [edit]
    )
    return "doc_new"


def spy_projections(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, int]]:
    """The projections the document reads send to the store, as they are sent."""
    seen: list[dict[str, int]] = []
    original = DocumentReads._find

    async def find(self: DocumentReads, ws: str, query: Any, wanted: Mapping[str, int], *a: Any):  # type: ignore[no-untyped-def]
        seen.append(dict(wanted))
        return await original(self, ws, query, wanted, *a)

    monkeypatch.setattr(DocumentReads, "_find", find)
    return seen


async def test_every_selected_field_resolves_without_output_mode(
    service: httpx.AsyncClient, seeded: Tenant, newest: str
) -> None:
    body = await gql(service, EVERYTHING_SELECTED, headers=seeded.headers())
    assert "errors" not in body, body
    [document] = body["data"]["documentsSearch"]["documents"]
    assert document == {
        "id": newest,
        "summary": "Fuel and a coffee",
        "date": "2024-03-01",
        "link": f"http://127.0.0.1:8000/v1/documents/{newest}",
        "paymentMethod": "card",
        "paymentMethodEnding": "4242",
        "lineItems": [{"description": "Diesel", "amount": "10.00"}],
        "file": {"fileName": "fuel.jpg", "url": f"http://127.0.0.1:8000/v1/files/{newest}"},
        "expenseLocation": {"primary": {"city": "Berlin"}},
        "editHistory": [{"field": "merchant", "newValue": "Shell Express"}],
    }
    [linked] = body["data"]["workspace"]["documents"]["documents"]
    assert linked == {"summary": "Fuel and a coffee", "paymentMethod": "card"}


async def test_only_the_selection_is_read(
    service: httpx.AsyncClient,
    seeded: Tenant,
    newest: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = spy_projections(monkeypatch)
    query = """
    fragment Lines on Document { lineItems { description } }
    {
      documentsSearch(input: {useSearch: false, limit: 2}) {
        documents {
          __typename summary ...Lines merchant @skip(if: true) category @include(if: false)
        }
      }
    }
    """
    body = await gql(service, query, headers=seeded.headers())
    assert "errors" not in body, body
    # The selection, the id (links and cursors need it) and the sort key: nothing else.
    assert seen == [{"_id": 1, "summary": 1, "lineItems": 1, "docDate": 1}]
    documents = body["data"]["documentsSearch"]["documents"]
    assert documents[0] == {
        "__typename": "Document",
        "summary": "Fuel and a coffee",
        "lineItems": [{"description": "Diesel"}],
    }
    # The same through the workspace's documents, and outputMode: complete reads no more.
    seen.clear()
    linked = """
    { workspace { documents(input: {useSearch: false, limit: 2, outputMode: complete}) {
        documents { paymentMethod duplicateIds editHistory { field } } } } }
    """
    body = await gql(service, linked, headers=seeded.headers())
    assert "errors" not in body, body
    assert seen == [{"_id": 1, "paymentMethod": 1, "duplicates": 1, "editHistory": 1, "docDate": 1}]


async def test_rest_output_modes_are_unchanged(
    service: httpx.AsyncClient, seeded: Tenant, newest: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = spy_projections(monkeypatch)
    response = await service.post(
        "/v1/capabilities/documents.search",
        json={"useSearch": False, "limit": 1},
        headers=seeded.headers(),
    )
    [document] = response.json()["data"]["result"]["documents"]
    # Compact output: its fields, read and returned as before, whatever GraphQL does.
    assert set(document) == set(COMPACT_FIELDS)
    assert seen[0] == {stored_path(name): 1 for name in COMPACT_FIELDS}
