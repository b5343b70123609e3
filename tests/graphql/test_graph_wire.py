"""The connection and the aggregate over the real MongoDB protocol (the embedded store)."""

from __future__ import annotations

from typing import Any

import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import asgi_client, make_tenant
from tests.graphql import test_aggregate, test_connection
from tests.graphql.helpers import gql

pytestmark = pytest.mark.wire


async def test_connection_and_aggregate_on_the_wire(wire_store: Store, registry: Registry) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await wire_store.documents.writes.insert_many(alice.org_id, test_aggregate.DOCS)
    async with asgi_client(wire_store, registry) as http:
        answer = await test_aggregate.run(http, alice, groupBy=["MONTH", "CATEGORY"])
        got = {
            (g["key"]["month"], g["key"]["category"], g["key"]["currency"]): {
                k: g[k] for k in ("count", "sum", "avg", "min", "max")
            }
            for g in answer["groups"]
        }
        assert got == test_aggregate.oracle(test_aggregate.DOCS)
        seen: list[str] = []
        after = None
        variables: dict[str, Any] = {
            "filter": {"or": [{"category": {"eq": "Meals"}}, {"not": {"amount": {"lt": "20"}}}]},
            "orderBy": [{"field": "AMOUNT", "direction": "DESC"}],
        }
        while True:
            page = await test_connection.page(http, alice, first=4, after=after, **variables)
            seen += [n["id"] for n in page["nodes"]]
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
        expected = await test_connection.rest_ids(
            http,
            alice,
            {
                "logic": "or",
                "conditions": [
                    {"field": "category", "op": "eq", "value": "Meals"},
                    {"logic": "nor", "conditions": [{"field": "amount", "op": "lt", "value": 20}]},
                ],
            },
            "amount",
            -1,
        )
        assert seen == expected and page["totalCount"] == len(expected) > 4
        body = await gql(http, '{ node(id: "doc_01") { id } }', None, alice.headers())
        assert body == {"data": {"node": {"id": "doc_01"}}}
