"""The nested graph (duplicates, workspace, counts) and GROUP BY through the real registry."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from app.graphql.builder import build_schema
from app.graphql.graph import GraphSession, document_graph
from app.host.config import Settings
from app.host.services import build_services
from persistence.errors import QueryTimeout
from persistence.store import Store
from resolvers.framework.context import Credentials
from resolvers.framework.invoke import invoke
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client, make_tenant, second_workspace
from tests.documents.conftest import doc
from tests.documents.conftest import seeded as seeded  # a fixture
from tests.graphql.helpers import gql

DUPLICATES = """
{
  documentsSearch(input: {useSearch: false, sortBy: id, sortOrder: 1, limit: 10,
                          outputMode: complete}) {
    documents {
      id duplicateIds duplicateOfId
      duplicates { id merchant duplicateOf { id } }
      duplicateOf { id merchant }
      editHistory { field oldValue newValue editedBy via }
    }
  }
}
"""

COMPACT = """
{
  documentsSearch(input: {useSearch: false, limit: 10}) {
    documents { id duplicateIds duplicates { id } duplicateOf { id } }
  }
}
"""


@pytest.fixture
async def service(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    """The app with the service's own registry (documents included)."""
    async with asgi_client(store, registry) as http:
        yield http


async def link(store: Store, org_id: str, original: str, duplicate: str) -> None:
    await store.documents.writes.link_duplicate(org_id, original, duplicate)


async def test_duplicates_resolve_to_documents(
    service: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    await link(store, seeded.org_id, "doc_b", "doc_c")
    record = await store.documents.reads.loaded(seeded.org_id, "doc_a")
    assert record is not None
    await store.documents.writes.update_fields(
        seeded.org_id,
        record,
        {"merchant": "Starbucks Reserve"},
        [
            {
                "field": "merchant",
                "oldValue": "Starbucks",
                "newValue": "Starbucks Reserve",
                "editedBy": seeded.user_id,
                "editedAt": datetime(2024, 1, 5, tzinfo=UTC),
                "via": "documents.update",
            }
        ],
    )
    body = await gql(service, DUPLICATES, headers=seeded.headers())
    assert "errors" not in body, body
    documents = {d["id"]: d for d in body["data"]["documentsSearch"]["documents"]}
    assert documents["doc_b"]["duplicateIds"] == ["doc_c"]
    assert documents["doc_b"]["duplicates"] == [
        {"id": "doc_c", "merchant": "Shell", "duplicateOf": {"id": "doc_b"}}
    ]
    assert documents["doc_c"]["duplicateOfId"] == "doc_b"
    assert documents["doc_c"]["duplicateOf"] == {"id": "doc_b", "merchant": "Shell"}
    assert documents["doc_a"]["duplicates"] == [] and documents["doc_a"]["duplicateOf"] is None
    compact = await gql(service, COMPACT, headers=seeded.headers())
    assert "errors" not in compact, compact
    by_id = {d["id"]: d for d in compact["data"]["documentsSearch"]["documents"]}
    # Compact results lack the stored ids; the links read them anyway.
    assert by_id["doc_b"]["duplicates"] == [{"id": "doc_c"}]
    assert by_id["doc_c"]["duplicateOf"] == {"id": "doc_b"}
    assert documents["doc_a"]["editHistory"] == [
        {
            "field": "merchant",
            "oldValue": "Starbucks",
            "newValue": "Starbucks Reserve",
            "editedBy": seeded.user_id,
            "via": "documents.update",
        }
    ]


async def test_a_link_read_that_times_out_is_a_bad_request_not_a_masked_500(
    service: httpx.AsyncClient, store: Store, seeded: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    await link(store, seeded.org_id, "doc_b", "doc_c")

    async def too_slow(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        raise QueryTimeout("query exceeded its time limit")

    # The search itself runs; the links' batched read (get_many) times out.
    monkeypatch.setattr(store.documents.reads, "get_many", too_slow)
    body = await gql(service, COMPACT, headers=seeded.headers())
    errors = body["errors"]
    assert errors and all(e["extensions"]["code"] == "BAD_REQUEST" for e in errors), errors
    assert "exceeded its time limit" in errors[0]["message"]


async def test_links_never_leave_the_workspace(
    service: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    bob = await make_tenant(store, "bob@example.com", "Bob Ltd")
    # Bob's records name Alice's documents (ids are not secrets): the links must not follow.
    await store.documents.writes.insert_many(
        bob.org_id,
        [doc("doc_bob", duplicates=["doc_a", "doc_b"], duplicateOf="doc_c")],
    )
    body = await gql(service, DUPLICATES, headers=bob.headers())
    [only] = body["data"]["documentsSearch"]["documents"]
    assert only["duplicateIds"] == ["doc_a", "doc_b"]
    assert only["duplicates"] == [] and only["duplicateOf"] is None


async def test_workspace_with_documents_and_counts(
    service: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    await store.documents.writes.set_archived(seeded.org_id, ["doc_f"], archived=True)
    query = """
    {
      workspace {
        id name role documentCount archivedCount
        documents(input: {useSearch: false, sortBy: amount, limit: 2}) {
          documents { id amount } nextCursor
        }
        counts(input: {groupBy: currency}) { count groups { key count } }
      }
    }
    """
    body = await gql(service, query, headers=seeded.headers())
    assert "errors" not in body, body
    workspace = body["data"]["workspace"]
    assert workspace["id"] == seeded.org_id and workspace["name"] == "Alice Co"
    assert workspace["role"] == "owner"
    assert (workspace["documentCount"], workspace["archivedCount"]) == (5, 1)
    page = workspace["documents"]
    assert page["documents"] == [
        {"id": "doc_b", "amount": "60.20"},
        {"id": "doc_d", "amount": "59.99"},
    ]
    assert page["nextCursor"]
    assert workspace["counts"]["count"] == 5
    assert {(g["key"], g["count"]) for g in workspace["counts"]["groups"]} == {
        ("EUR", 3),
        ("USD", 2),
    }


async def test_workspace_documents_validate_like_rest(
    service: httpx.AsyncClient, seeded: Tenant
) -> None:
    query = "{ workspace { id documents(input: {limit: 0}) { nextCursor } } }"
    body = await gql(service, query, headers=seeded.headers())
    [error] = body["errors"]
    assert error["message"] == "Invalid request: limit: Input should be greater than or equal to 1"
    assert error["extensions"] == {
        "code": "BAD_REQUEST",
        "status": 400,
        "reason": "invalid_request",
    }
    assert error["path"] == ["workspace", "documents"]
    assert body["data"]["workspace"] == {"id": seeded.org_id, "documents": None}


async def test_workspace_needs_credentials_and_an_org(
    service: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    anonymous = await gql(service, "{ workspace { id } }")
    assert anonymous["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert anonymous["data"] == {"workspace": None}
    only = await gql(service, "{ workspace { id } }", headers=seeded.headers(org=None))
    assert only["data"] == {"workspace": {"id": seeded.org_id}}  # the person's only one
    await second_workspace(store, seeded)
    no_org = await gql(service, "{ workspace { id } }", headers=seeded.headers(org=None))
    assert no_org["errors"][0]["extensions"]["status"] == 400


async def test_every_listed_workspace_has_its_counts(
    service: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    second = await store.workspaces.create("Alice Side", seeded.user_id)
    await store.documents.writes.insert_many(second["_id"], [doc("doc_side")])
    query = "{ workspacesList { workspaces { id workspace { name documentCount } } } }"
    body = await gql(service, query, headers=seeded.headers(org=None))
    assert "errors" not in body, body
    listed = {w["id"]: w["workspace"] for w in body["data"]["workspacesList"]["workspaces"]}
    assert listed == {
        seeded.org_id: {"name": "Alice Co", "documentCount": 6},
        second["_id"]: {"name": "Alice Side", "documentCount": 1},
    }


async def test_group_by_month_with_exact_totals(service: httpx.AsyncClient, seeded: Tenant) -> None:
    query = """
    {
      documentsCount(input: {groupBy: month}) {
        count groupsTruncated
        totals { currency amount }
        groups { key count totals { currency amount } }
      }
    }
    """
    body = await gql(service, query, headers=seeded.headers())
    assert "errors" not in body, body
    counted = body["data"]["documentsCount"]
    assert counted["count"] == 6 and counted["groupsTruncated"] is False
    # Decimal travels as a string: 0.10 + 59.99 is exactly 60.09, never 60.089999….
    assert counted["totals"] == [
        {"currency": "EUR", "amount": "64.50"},
        {"currency": "USD", "amount": "60.09"},
    ]
    assert counted["groups"] == [
        {"key": "2023-12", "count": 1, "totals": [{"currency": "EUR", "amount": "0.20"}]},
        {"key": "2024-01", "count": 2, "totals": [{"currency": "EUR", "amount": "64.30"}]},
        {"key": "2024-02", "count": 2, "totals": [{"currency": "USD", "amount": "60.09"}]},
        {"key": None, "count": 1, "totals": [{"currency": "EUR", "amount": "0.00"}]},
    ]
    wrong = await gql(
        service, "{ documentsCount(input: {groupBy: colour}) { count } }", headers=seeded.headers()
    )
    assert "CountDocumentsGroupBy" in wrong["errors"][0]["message"]


async def test_a_series_without_holes(service: httpx.AsyncClient, seeded: Tenant) -> None:
    query = """
    {
      documentsCount(input: {groupBy: week, fillGaps: true, where: {conditions: [
        {field: "docDate", op: gte, value: "2024-01-01"},
        {field: "docDate", op: lte, value: "2024-01-31"}]}}) {
        groups { key count }
      }
    }
    """
    body = await gql(service, query, headers=seeded.headers())
    assert "errors" not in body, body
    assert body["data"]["documentsCount"]["groups"] == [
        {"key": "2024-W01", "count": 1},
        {"key": "2024-W02", "count": 0},
        {"key": "2024-W03", "count": 1},
        {"key": "2024-W04", "count": 0},
        {"key": "2024-W05", "count": 0},
    ]
    refused = await gql(
        service,
        "{ documentsCount(input: {groupBy: merchant, fillGaps: true}) { count } }",
        headers=seeded.headers(),
    )
    assert refused["errors"][0]["extensions"]["status"] == 400
    assert "fillGaps" in refused["errors"][0]["message"]


async def test_fast_path_matches_graphql_core(
    store: Store, registry: Registry, seeded: Tenant
) -> None:
    """The executor's fast path returns exactly what graphql-core's own completion returns."""
    await link(store, seeded.org_id, "doc_b", "doc_c")
    query = """
    {
      documentsSearch(input: {useSearch: false, limit: 10, outputMode: complete}) {
        nextCursor
        documents {
          id merchant amount currency docDate date category docType summary isRecurring
          recurringType exportStatus link source archived processingStatus duplicateIds
          expenseLocation { primary { countryCode city kind } }
          lineItems { description quantity unitPrice amount taxAmount }
          file { fileName url } editHistory { field }
          duplicates { id amount lineItems { amount } }
        }
      }
    }
    """
    credentials = Credentials(api_key=seeded.api_key, org_id=seeded.org_id)
    services = build_services(Settings(), store)

    async def execute(spec: Any, arguments: dict[str, Any], info: Any) -> Any:
        return await invoke(registry, spec.slug, arguments, credentials, services)

    graph = document_graph(registry)
    schema = build_schema(registry, execute, graph=graph)
    plain = build_schema(registry, execute, graph=graph)
    plain.execution_context_class = StrawberryGraphQLCoreExecutionContext

    async def run(target: Any) -> Any:
        session = GraphSession(registry, credentials, services)
        result = await target.execute(query, context_value={"graph": session})
        assert result.errors is None, result.errors
        return result.data

    fast, slow = await run(schema), await run(plain)
    assert fast == slow
    assert len(fast["documentsSearch"]["documents"]) == 6
    assert fast["documentsSearch"]["documents"][0]["lineItems"] is None or isinstance(
        fast["documentsSearch"]["documents"][0]["lineItems"], list
    )


async def test_a_correction_that_fills_an_empty_field_reads_in_the_edit_history(
    service: httpx.AsyncClient, seeded: Tenant
) -> None:
    """The probe's Low item: doc_a has no invoice number; setting one made its edit history an
    internal error in GraphQL (oldValue null in a non-null JSON field)."""
    fill = await service.post(
        "/v1/capabilities/documents.update",
        json={"id": "doc_a", "invoiceId": "INV-1"},
        headers=seeded.headers(),
    )
    assert fill.status_code == 200, fill.text
    query = """{ documentsGet(input: {id: "doc_a"}) {
        document { editHistory { field oldValue newValue } } } }"""
    body = await gql(service, query, headers=seeded.headers())
    assert "errors" not in body, body
    assert body["data"]["documentsGet"]["document"]["editHistory"] == [
        {"field": "invoiceId", "oldValue": None, "newValue": "INV-1"}
    ]
