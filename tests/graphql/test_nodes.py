"""node(id:) and nodes(ids:): documents as Nodes, read only in the request's workspace."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import httpx
import pytest
from graphql.execution import executor

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client
from tests.documents.conftest import call, doc, result
from tests.graphql.helpers import gql

NODE = """query($id: ID!) { node(id: $id) { __typename id ... on Document {
  merchant amount currency docDate category duplicates { id } } } }"""


@pytest.fixture
async def service(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(store, registry) as http:
        yield http


@pytest.fixture
async def two(store: Store, alice: Tenant, bob: Tenant) -> tuple[Tenant, Tenant]:
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_a1", merchant="Lidl"), doc("doc_a2")]
    )
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_b1", merchant="Secret")])
    return alice, bob


async def test_node_is_the_document_get_reads(
    service: httpx.AsyncClient, two: tuple[Tenant, Tenant]
) -> None:
    alice, _ = two
    body = await gql(service, NODE, {"id": "doc_a1"}, alice.headers())
    node = body["data"]["node"]
    assert node is not None, body
    rest = result(await call(service, alice, "documents.get", {"id": "doc_a1"}))["document"]
    assert node["__typename"] == "Document"
    for field in ("id", "merchant", "currency", "docDate", "category"):
        assert node[field] == rest[field], field
    assert Decimal(node["amount"]) == Decimal(str(rest["amount"]))  # Decimal: text in GraphQL


async def test_another_workspaces_id_is_simply_null(
    service: httpx.AsyncClient, two: tuple[Tenant, Tenant]
) -> None:
    alice, bob = two
    for wanted in ("doc_b1", "doc_nothing", "org_x", ""):
        body = await gql(service, NODE, {"id": wanted}, alice.headers())
        assert body == {"data": {"node": None}}, (wanted, body)
    mine = await gql(service, NODE, {"id": "doc_b1"}, bob.headers())
    assert mine["data"]["node"]["merchant"] == "Secret"


async def test_nodes_keep_the_order_and_null_what_is_not_found(
    service: httpx.AsyncClient, two: tuple[Tenant, Tenant]
) -> None:
    alice, _ = two
    query = "query($ids: [ID!]!) { nodes(ids: $ids) { id } }"
    body = await gql(
        service, query, {"ids": ["doc_a2", "doc_b1", "doc_a1", "doc_a2"]}, alice.headers()
    )
    assert body["data"]["nodes"] == [{"id": "doc_a2"}, None, {"id": "doc_a1"}, {"id": "doc_a2"}]
    body = await gql(service, query, {"ids": [f"doc_{i}" for i in range(101)]}, alice.headers())
    assert body["data"]["nodes"] is None
    assert "ids: at most 100" in body["errors"][0]["message"]


async def test_node_needs_credentials(
    service: httpx.AsyncClient, two: tuple[Tenant, Tenant]
) -> None:
    body = await gql(service, NODE, {"id": "doc_a1"})
    assert body["data"]["node"] is None
    assert body["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


INCLUDED = """query($id: ID!, $more: Boolean!) { node(id: $id) { id ... on Document {
  merchant lineItems { description amount @include(if: $more) } } } }"""


async def test_a_kept_document_reuses_its_plans_and_answers_each_request_alike(
    service: httpx.AsyncClient, store: Store, two: tuple[Tenant, Tenant]
) -> None:
    """The executor keeps what it compiled for a kept document (``Checked.plans``); the next
    request of the same text, other variables, answers from them as the first did. A document
    that includes fields by a variable compiles anew each time: a plan kept from a request
    that left a line's ``amount`` out would leave it out of the next one too."""
    alice, _ = two
    line = {"description": "Fuel", "quantity": 1, "unitPrice": Decimal(10), "amount": Decimal(10)}
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_a3", lineItems=[line])])
    first = (await gql(service, NODE, {"id": "doc_a1"}, alice.headers()))["data"]["node"]
    second = (await gql(service, NODE, {"id": "doc_a2"}, alice.headers()))["data"]["node"]
    assert (first["id"], first["merchant"]) == ("doc_a1", "Lidl")
    assert second["id"] == "doc_a2" and second["merchant"] != "Lidl"
    without = await gql(service, INCLUDED, {"id": "doc_a3", "more": False}, alice.headers())
    lines = without["data"]["node"]["lineItems"]
    assert lines and all(set(line) == {"description"} for line in lines), lines
    wanted = await gql(service, INCLUDED, {"id": "doc_a3", "more": True}, alice.headers())
    lines = wanted["data"]["node"]["lineItems"]
    assert lines and all(set(line) == {"description", "amount"} for line in lines), lines


async def test_a_kept_document_collects_its_subfields_once(
    service: httpx.AsyncClient, two: tuple[Tenant, Tenant], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Document's subfields of a kept document are collected by its first request; the
    next requests of the same text take them (and their plans) from the document."""
    alice, _ = two
    collected: list[str] = []
    original = executor.collect_subfields

    def counting(*args: Any, **kwargs: Any) -> Any:
        collected.append(args[4].name)  # the return type's name
        return original(*args, **kwargs)

    monkeypatch.setattr(executor, "collect_subfields", counting)
    # A text no other test sends: the apps of one registry share its schema, and with it the
    # documents kept by an earlier test's requests (Registry.derived).
    query = f"{NODE}\n# {test_a_kept_document_collects_its_subfields_once.__name__}"
    answers = [
        (await gql(service, query, {"id": document_id}, alice.headers()))["data"]["node"]
        for document_id in ("doc_a1", "doc_a2", "doc_a1")
    ]
    assert "Document" in collected
    assert collected.count("Document") == 1, collected
    assert answers[0] == answers[2] and answers[1]["id"] == "doc_a2"
    assert answers[0]["merchant"] == "Lidl" and answers[1]["merchant"] != "Lidl"
