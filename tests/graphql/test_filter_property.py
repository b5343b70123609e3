"""Property: a random typed filter selects the same documents on every path.

GraphQL's documentsConnection with the filter, REST's documents.search with the where-clause
translated from it, and the in-memory matcher (``persistence.documents.matching``) over the
stored documents return the same ids (mongomock here; the embedded store in the ``-m wire``
variant). Hypothesis draws the filters; the app, tenant and documents are built once.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mongomock_motor import AsyncMongoMockClient

from app.graphql.filters import graphql_constant
from domain.documents import SEARCH_FILTERS
from domain.typed_filters import translate
from persistence.client import connect
from persistence.documents.fields import SEARCH_FIELDS
from persistence.documents.matching import matches
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from persistence.where import compile_where
from resolvers import build_registry
from tests.conftest import Tenant, asgi_client, make_tenant
from tests.documents.conftest import call, doc, result
from tests.graphql.helpers import gql
from tests.hypothesis_profiles import examples

CITIES = ["Paris", "paris", "Berlin", None]
DOCS = [
    doc(
        f"doc_{i:02d}",
        merchant=["Shell", "Starbucks", "Uber", "shell.de", None][i % 5],
        amount=Decimal(f"{i * 7 % 50}.{i % 4}0") if i % 6 else None,
        currency=["EUR", "USD", "GBP"][i % 3],
        docDate=date(2024, 1 + i % 12, 1 + i % 28) if i % 9 else None,
        docType=["receipt", "invoice", "other"][i % 3],
        paymentStatus=["paid", "unpaid", "partially-paid", None][i % 4],
        isRecurring=[True, False, None][i % 3],
        # Even ones have no location at all: mongomock, unlike MongoDB and the matcher, does
        # not take {"expenseLocation.primary.city": null} to match a null expenseLocation.
        **(
            {"expenseLocation": {"primary": {"city": CITIES[i % 4], "kind": "in-store"}}}
            if i % 2
            else {}
        ),
    )
    for i in range(36)
]

MONEY = st.sampled_from(["0", "7.00", "12.50", "21", "30.10", "49.99"])
DAYS = st.sampled_from(["2024-01-01", "2024-03-15", "2024-06-01", "2024-12-31"])
TEXT = st.sampled_from(["Shell", "shell", "Star", "ub", ".de", "s"])


def _ops(value: st.SearchStrategy[Any], ordered: bool) -> st.SearchStrategy[dict[str, Any]]:
    names = ["eq", "ne", "in", "nin", "exists"] + (["gt", "gte", "lt", "lte"] if ordered else [])

    def operand(name: str) -> st.SearchStrategy[Any]:
        if name == "exists":
            return st.booleans()
        if name in ("in", "nin"):
            return st.lists(value, min_size=1, max_size=3)
        return value

    return st.sampled_from(names).flatmap(lambda n: operand(n).map(lambda v: {n: v}))


def _text_ops() -> st.SearchStrategy[dict[str, Any]]:
    extra = st.sampled_from(["contains", "startsWith", "regex"]).flatmap(
        lambda n: TEXT.map(lambda v: {n: v})
    )
    return st.one_of(_ops(TEXT, False), extra)


def _enum(values: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    return _ops(st.sampled_from(values), False)


LEAVES: dict[str, st.SearchStrategy[Any]] = {
    "amount": _ops(MONEY, True),
    "docDate": _ops(DAYS, True),
    "merchant": _text_ops(),
    "currency": _ops(st.sampled_from(["eur", "USD", "JPY"]), False),
    "docType": _enum(SEARCH_FILTERS["docType"].values),
    "paymentStatus": _enum(SEARCH_FILTERS["paymentStatus"].values),
    "isRecurring": _ops(st.booleans(), False).filter(lambda o: not {"in", "nin"} & set(o)),
    "expenseLocation": _text_ops().map(lambda ops: {"primary": {"city": ops}}),
}


def _leaf(leaves: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.sampled_from(sorted(leaves)).flatmap(
        lambda name: leaves[name].map(lambda ops: {name: ops})
    )


def filters(
    leaves: dict[str, st.SearchStrategy[Any]] = LEAVES,
) -> st.SearchStrategy[dict[str, Any]]:
    """Typed filters in plain form (enum values as REST words), up to three levels deep, of
    the fields ``leaves`` draws tests of (the documents' by default; the transactions' property
    draws its own)."""
    return st.recursive(
        _leaf(leaves),
        lambda inner: st.one_of(
            st.lists(inner, min_size=1, max_size=3).map(lambda parts: {"and": parts}),
            st.lists(inner, min_size=1, max_size=3).map(lambda parts: {"or": parts}),
            inner.map(lambda part: {"not": part}),
            st.tuples(_leaf(leaves), inner).map(lambda pair: {**pair[0], "and": [pair[1]]}),
        ),
        max_leaves=6,
    )


ENUM_FIELDS = {"docType", "paymentStatus"}


def as_graphql(value: Any, field: str | None = None) -> Any:
    """The plain filter as GraphQL variables spell it (enum values in UPPER_CASE)."""
    if isinstance(value, dict):
        return {
            key: as_graphql(item, key if key in ENUM_FIELDS else field)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [as_graphql(item, field) for item in value]
    if field in ENUM_FIELDS and isinstance(value, str):
        return graphql_constant(value)
    return value


@dataclass
class World:
    runner: asyncio.Runner
    store: Store
    client: httpx.AsyncClient
    tenant: Tenant
    records: list[dict[str, Any]]


async def _build(store: Store) -> tuple[httpx.AsyncClient, Tenant, list[dict[str, Any]]]:
    await store.ensure_indexes()
    tenant = await make_tenant(store, "prop@example.com", "Prop Co")
    other = await make_tenant(store, "other@example.com", "Other Co")
    await store.documents.writes.insert_many(tenant.org_id, DOCS)
    await store.documents.writes.insert_many(other.org_id, [doc("doc_other", merchant="Shell")])
    client = asgi_client(store, build_registry())
    await client.__aenter__()
    records = await store.documents.collection.docs.find({"workspaceId": tenant.org_id}).to_list(
        None
    )
    return client, tenant, records


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    runner = asyncio.Runner()
    store = Store(AsyncMongoMockClient(tz_aware=True)["fincap_property"])
    client, tenant, records = runner.run(_build(store))
    yield World(runner, store, client, tenant, records)
    runner.run(client.__aexit__(None, None, None))
    runner.close()


SIZES: list[int] = []  # how many each filter selected (a property of nothing is no test)


@pytest.fixture(scope="module")
def wire_world(embedded_server: EmbeddedServer) -> Iterator[World]:
    """The same world on the embedded store, over the MongoDB wire protocol."""
    runner = asyncio.Runner()
    name = f"wire_{uuid.uuid4().hex[:10]}"
    mongo, db = runner.run(_connect(embedded_server.uri, name))
    store = Store(db)
    client, tenant, records = runner.run(_build(store))
    yield World(runner, store, client, tenant, records)
    runner.run(client.__aexit__(None, None, None))
    runner.run(_drop(mongo, name))
    mongo.close()
    runner.close()


async def _connect(uri: str, name: str) -> Any:
    return connect(uri, name)  # motor binds to the loop that creates it


async def _drop(mongo: Any, name: str) -> None:
    await mongo.drop_database(name)


QUERY = """query($filter: DocumentFilter) {
  documentsConnection(filter: $filter, first: 100, orderBy: [{field: ID, direction: ASC}]) {
    totalCount nodes { id } } }"""


async def _three_ways(world: World, plain: dict[str, Any]) -> None:
    where = translate(plain, SEARCH_FILTERS).where
    assert where is not None
    body = await gql(world.client, QUERY, {"filter": as_graphql(plain)}, world.tenant.headers())
    assert "errors" not in body, (plain, body)
    connection = body["data"]["documentsConnection"]
    graphql_ids = [node["id"] for node in connection["nodes"]]
    rest = await call(
        world.client,
        world.tenant,
        "documents.search",
        {"useSearch": False, "limit": 100, "sortBy": "id", "sortOrder": 1,
         "where": where.model_dump(exclude_none=True)},
    )  # fmt: skip
    rest_ids = [d["id"] for d in result(rest)["documents"]]
    compiled = compile_where(where, SEARCH_FIELDS)
    memory_ids = sorted(r["_id"] for r in world.records if matches(compiled, r))
    assert graphql_ids == rest_ids == memory_ids, (plain, compiled)
    assert connection["totalCount"] == len(graphql_ids)
    SIZES.append(len(graphql_ids))


@settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plain=filters())
def test_graphql_rest_and_matcher_agree(world: World, plain: dict[str, Any]) -> None:
    world.runner.run(_three_ways(world, plain))


@pytest.mark.wire
@settings(
    max_examples=examples(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plain=filters())
def test_graphql_rest_and_matcher_agree_on_the_wire(
    wire_world: World, plain: dict[str, Any]
) -> None:
    wire_world.runner.run(_three_ways(wire_world, plain))


def test_the_filters_drawn_select_some_and_not_all() -> None:
    """Runs after the property (same module, in order): its filters were not all trivial."""
    if not SIZES:
        pytest.skip("the property did not run in this process")
    assert any(0 < size < len(DOCS) for size in SIZES), SIZES
