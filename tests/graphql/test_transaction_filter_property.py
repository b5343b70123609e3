"""Property: a random TransactionFilter selects the same transactions on every path.

Workspace.transactions with the typed filter, REST's transactions.search with the where-clause
translated from it, and the in-memory matcher over the stored records return the same ids
(mongomock here; the embedded store in the ``-m wire`` variant). The filters are drawn by the
documents' property's machinery (``test_filter_property``) over the transactions' fields.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mongomock_motor import AsyncMongoMockClient

from domain.transactions import TRANSACTION_FILTERS
from domain.typed_filters import translate
from persistence.documents.matching import matches
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from persistence.transactions import FIELDS
from persistence.where import compile_where
from resolvers import build_registry
from tests.conftest import Tenant, asgi_client, make_tenant
from tests.graphql.helpers import gql
from tests.graphql.test_filter_property import World, _connect, _drop, _ops, filters
from tests.graphql.transaction_data import txn
from tests.hypothesis_profiles import examples

START = date(2025, 1, 1)
TRANSACTIONS = [
    {
        **txn(
            f"txn_{i:02d}",
            f"{'-' if i % 3 else ''}{i * 7 % 60}.{i % 4}0",
            START + timedelta(days=i * 5),
            currency=["EUR", "USD", "GBP"][i % 3],
            counterparty=["Shell", "Lidl GmbH", "Taxi Hansa", "shell.de", None][i % 5],
            reference=["Karte 4242", None, "Rechnung R-17"][i % 3],
            account=["DE01", "DE02", None][i % 3],
            documents=(f"doc_{i:02d}",) if i % 4 == 0 else (),
        ),
        **({"valueDate": None} if i % 7 == 0 else {}),
    }
    for i in range(30)
]

MONEY = st.sampled_from(["0", "-7.00", "12.50", "-21", "30.10", "-49.99"])
DAYS = st.sampled_from(["2025-01-01", "2025-02-15", "2025-03-01", "2025-06-30"])
TEXT = st.sampled_from(["Shell", "shell", "Lidl", "ans", ".de", "4242", "R-"])


def _text() -> st.SearchStrategy[dict[str, Any]]:
    extra = st.sampled_from(["contains", "startsWith", "regex"]).flatmap(
        lambda n: TEXT.map(lambda v: {n: v})
    )
    return st.one_of(_ops(TEXT, False), extra)


LEAVES: dict[str, st.SearchStrategy[Any]] = {
    "amount": _ops(MONEY, True),
    "bookingDate": _ops(DAYS, True),
    "valueDate": _ops(DAYS, True),
    "currency": _ops(st.sampled_from(["eur", "USD", "JPY"]), False),
    "counterparty": _text(),
    "reference": _text(),
    "account": _ops(st.sampled_from(["DE01", "DE02", "XX"]), False),
    "matched": _ops(st.booleans(), False).filter(lambda o: not {"in", "nin"} & set(o)),
}
if set(LEAVES) - set(TRANSACTION_FILTERS):
    raise ValueError("the property draws fields transactions do not declare")

QUERY = """query($filter: TransactionFilter) { workspace {
  transactions(filter: $filter, first: 100) { totalCount nodes { id } } } }"""
SIZES: list[int] = []


async def _build(store: Store) -> tuple[httpx.AsyncClient, Tenant, list[dict[str, Any]]]:
    await store.ensure_indexes()
    tenant = await make_tenant(store, "prop@example.com", "Prop Co")
    other = await make_tenant(store, "other@example.com", "Other Co")
    await store.transactions.insert_new(tenant.org_id, TRANSACTIONS)
    await store.transactions.insert_new(other.org_id, [txn("txn_other", "-1.00", START)])
    client = asgi_client(store, build_registry())
    await client.__aenter__()
    return client, tenant, TRANSACTIONS


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    runner = asyncio.Runner()
    store = Store(AsyncMongoMockClient(tz_aware=True)["fincap_txn_property"])
    client, tenant, records = runner.run(_build(store))
    yield World(runner, store, client, tenant, records)
    runner.run(client.__aexit__(None, None, None))
    runner.close()


@pytest.fixture(scope="module")
def wire_world(embedded_server: EmbeddedServer) -> Iterator[World]:
    runner = asyncio.Runner()
    name = f"wire_{uuid.uuid4().hex[:10]}"
    mongo, db = runner.run(_connect(embedded_server.uri, name))
    client, tenant, records = runner.run(_build(Store(db)))
    yield World(runner, Store(db), client, tenant, records)
    runner.run(client.__aexit__(None, None, None))
    runner.run(_drop(mongo, name))
    mongo.close()
    runner.close()


async def _three_ways(world: World, plain: dict[str, Any]) -> None:
    where = translate(plain, TRANSACTION_FILTERS).where
    assert where is not None
    body = await gql(world.client, QUERY, {"filter": plain}, world.tenant.headers())
    assert "errors" not in body, (plain, body)
    connection = body["data"]["workspace"]["transactions"]
    graphql_ids = sorted(node["id"] for node in connection["nodes"])
    rest = await world.client.post(
        "/v1/capabilities/transactions.search",
        json={"limit": 100, "where": where.model_dump(mode="json", exclude_unset=True)},
        headers=world.tenant.headers(),
    )
    assert rest.status_code == 200, rest.text
    rest_ids = sorted(t["id"] for t in rest.json()["data"]["result"]["transactions"])
    compiled = compile_where(where, FIELDS)
    memory_ids = sorted(r["_id"] for r in world.records if matches(compiled, r))
    assert graphql_ids == rest_ids == memory_ids, (plain, compiled)
    assert connection["totalCount"] == len(graphql_ids)
    SIZES.append(len(graphql_ids))


@settings(
    max_examples=examples(80),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plain=filters(LEAVES))
def test_graphql_rest_and_matcher_agree(world: World, plain: dict[str, Any]) -> None:
    world.runner.run(_three_ways(world, plain))


@pytest.mark.wire
@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(plain=filters(LEAVES))
def test_graphql_rest_and_matcher_agree_on_the_wire(
    wire_world: World, plain: dict[str, Any]
) -> None:
    wire_world.runner.run(_three_ways(wire_world, plain))


def test_the_filters_drawn_select_some_and_not_all() -> None:
    """Runs after the property (same module, in order): its filters were not all trivial."""
    if not SIZES:
        pytest.skip("the property did not run in this process")
    assert any(0 < size < len(TRANSACTIONS) for size in SIZES), SIZES
