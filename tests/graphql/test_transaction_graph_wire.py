"""The transaction graph over the real MongoDB protocol (the embedded store): the totals
aggregation, the typed filter, paging, a node and the links' batched reads."""

from __future__ import annotations

import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import asgi_client, make_tenant
from tests.documents.conftest import doc
from tests.graphql import test_transaction_graph, test_transaction_totals
from tests.graphql.helpers import gql
from tests.graphql.transaction_data import TRANSACTIONS

pytestmark = pytest.mark.wire


async def test_transaction_graph_on_the_wire(wire_store: Store, registry: Registry) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await wire_store.transactions.insert_new(alice.org_id, TRANSACTIONS)
    await wire_store.documents.writes.insert_many(
        alice.org_id, [doc(f"doc_0{i}", merchant=f"Shop {i}") for i in range(1, 5)]
    )
    async with asgi_client(wire_store, registry) as http:
        answer = await test_transaction_totals.totals(http, alice, groupBy=["MONTH"])
        assert test_transaction_totals.flows(answer) == test_transaction_totals.BY_HAND
        assert answer["totalCount"] == 8
        filtered = await test_transaction_totals.totals(
            http, alice, filter={"amount": {"lt": "0"}}, groupBy=["MONTH", "MATCHED"]
        )
        assert sum(g["count"] for g in filtered["groups"]) == filtered["totalCount"] == 6
        seen: list[str] = []
        after = None
        typed = {"or": [{"matched": {"eq": True}}, {"counterparty": {"contains": "hansa"}}]}
        while True:
            page = await test_transaction_graph.page(
                http,
                alice,
                filter=typed,
                orderBy=[{"field": "AMOUNT", "direction": "DESC"}],
                first=2,
                after=after,
            )
            seen += [node["id"] for node in page["nodes"]]
            if not page["pageInfo"]["hasNextPage"]:
                break
            after = page["pageInfo"]["endCursor"]
        # Matched: txn_01 -42.50, txn_05 -20.00, txn_06 -7.25, txn_07 -12.00; largest first.
        assert seen == ["txn_06", "txn_07", "txn_05", "txn_01"]
        assert page["totalCount"] == 4
        body = await gql(http, test_transaction_graph.LINKS, None, alice.headers())
        assert "errors" not in body, body
        nodes = {n["id"]: n for n in body["data"]["workspace"]["transactions"]["nodes"]}
        assert [d["id"] for d in nodes["txn_05"]["documents"]] == ["doc_02", "doc_03"]
        body = await gql(http, test_transaction_graph.NODE, {"id": "txn_06"}, alice.headers())
        assert body["data"]["node"]["documents"] == [{"id": "doc_04", "merchant": "Shop 4"}]
