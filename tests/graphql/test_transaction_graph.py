"""The transactions in the graph: Workspace.transactions (typed filter, orderBy, paging), a
Transaction as a Node, its matched documents and a document's transactions (batched), and
candidates bounded per request."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import doc
from tests.graphql.helpers import gql
from tests.graphql.transaction_data import TRANSACTIONS, txn

PAGE = """query($filter: TransactionFilter, $orderBy: [TransactionOrderBy!], $first: Int,
                $after: String) {
  workspace { transactions(filter: $filter, orderBy: $orderBy, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id amount } } nodes { id bookingDate matched } } }
}"""


@pytest.fixture
async def stocked(store: Store, alice: Tenant, bob: Tenant) -> tuple[Tenant, Tenant]:
    await store.transactions.insert_new(alice.org_id, TRANSACTIONS)
    await store.documents.writes.insert_many(
        alice.org_id, [doc(f"doc_0{i}", merchant=f"Shop {i}") for i in range(1, 5)]
    )
    await store.transactions.insert_new(
        bob.org_id, [txn("txn_b1", "-5.00", TRANSACTIONS[0]["bookingDate"].date())]
    )
    return alice, bob


async def page(client: httpx.AsyncClient, tenant: Tenant, **variables: Any) -> dict[str, Any]:
    body = await gql(client, PAGE, variables, tenant.headers())
    assert "errors" not in body, body
    answer: dict[str, Any] = body["data"]["workspace"]["transactions"]
    return answer


async def test_newest_booking_first_with_total(
    client: httpx.AsyncClient, stocked: tuple[Tenant, Tenant]
) -> None:
    alice, _ = stocked
    answer = await page(client, alice)
    ids = [node["id"] for node in answer["nodes"]]
    assert ids == [f"txn_0{i}" for i in range(8, 0, -1)]  # not bob's txn_b1
    assert answer["totalCount"] == 8
    assert [edge["node"]["id"] for edge in answer["edges"]] == ids
    assert answer["pageInfo"]["hasNextPage"] is False
    assert answer["pageInfo"]["hasPreviousPage"] is False


async def test_paging_forward_from_any_edge(
    client: httpx.AsyncClient, stocked: tuple[Tenant, Tenant]
) -> None:
    alice, _ = stocked
    order = [{"field": "AMOUNT", "direction": "ASC"}]
    first = await page(client, alice, orderBy=order, first=3)
    amounts = [edge["node"]["amount"] for edge in first["edges"]]
    assert amounts == ["-99.99", "-42.50", "-20.00"]
    assert first["pageInfo"]["hasNextPage"] is True
    second = await page(client, alice, orderBy=order, first=3, after=first["pageInfo"]["endCursor"])
    assert [e["node"]["amount"] for e in second["edges"]] == ["-12.00", "-10.00", "-7.25"]
    assert second["pageInfo"]["hasPreviousPage"] is True
    # Every edge's cursor continues right after it.
    middle = await page(client, alice, orderBy=order, first=2, after=first["edges"][0]["cursor"])
    assert [e["node"]["amount"] for e in middle["edges"]] == ["-42.50", "-20.00"]
    last = await page(client, alice, orderBy=order, first=3, after=second["pageInfo"]["endCursor"])
    assert [e["node"]["amount"] for e in last["edges"]] == ["250.00", "1500.00"]
    assert last["pageInfo"]["hasNextPage"] is False


async def test_a_cursor_of_another_filter_is_refused(
    client: httpx.AsyncClient, stocked: tuple[Tenant, Tenant]
) -> None:
    alice, _ = stocked
    first = await page(client, alice, first=2)
    body = await gql(
        client,
        PAGE,
        {"first": 2, "after": first["pageInfo"]["endCursor"], "filter": {"matched": {"eq": True}}},
        alice.headers(),
    )
    error = body["errors"][0]
    assert error["extensions"]["code"] == "BAD_REQUEST", body
    assert error["message"].startswith("after:"), body


async def test_typed_filter_is_the_rest_where_clause(
    client: httpx.AsyncClient, stocked: tuple[Tenant, Tenant]
) -> None:
    alice, _ = stocked
    typed = {
        "amount": {"lt": "0"},
        "or": [{"matched": {"eq": False}}, {"currency": {"eq": "usd"}}],
        "not": {"counterparty": {"startsWith": "cloud"}},
    }
    answer = await page(client, alice, filter=typed)
    where = {
        "conditions": [
            {"field": "amount", "op": "lt", "value": 0},
            {
                "logic": "or",
                "conditions": [
                    {"field": "matched", "op": "eq", "value": False},
                    {"field": "currency", "op": "eq", "value": "usd"},
                ],
            },
            {
                "logic": "nor",
                "conditions": [{"field": "counterparty", "op": "regex", "value": "^cloud"}],
            },
        ]
    }
    rest = await client.post(
        "/v1/capabilities/transactions.search",
        json={"where": where, "limit": 100},
        headers=alice.headers(),
    )
    expected = [row["id"] for row in rest.json()["data"]["result"]["transactions"]]
    assert [node["id"] for node in answer["nodes"]] == expected == ["txn_07", "txn_02"]
    assert answer["totalCount"] == 2


async def test_a_wrong_field_or_value_is_refused_before_anything_runs(
    client: httpx.AsyncClient, stocked: tuple[Tenant, Tenant]
) -> None:
    alice, _ = stocked
    body = await gql(client, PAGE, {"filter": {"merchant": {"eq": "x"}}}, alice.headers())
    assert "merchant" in body["errors"][0]["message"] and body.get("data") is None
    body = await gql(client, PAGE, {"filter": {"amount": {"gt": "lots"}}}, alice.headers())
    assert body.get("data") is None, body


async def test_money_with_too_many_places_names_the_filters_place(
    client: httpx.AsyncClient, stocked: tuple[Tenant, Tenant]
) -> None:
    alice, _ = stocked
    body = await gql(
        client, PAGE, {"filter": {"or": [{"amount": {"gt": "1.005"}}]}}, alice.headers()
    )
    assert "filter.or[0].amount.gt" in body["errors"][0]["message"], body


NODE = """query($id: ID!) { node(id: $id) { __typename id ... on BankTransaction {
  amount currency matched documents { id merchant } } } }"""


async def test_node_is_the_transaction_in_this_workspace_only(
    client: httpx.AsyncClient, stocked: tuple[Tenant, Tenant]
) -> None:
    alice, bob = stocked
    body = await gql(client, NODE, {"id": "txn_05"}, alice.headers())
    node = body["data"]["node"]
    assert node["__typename"] == "BankTransaction" and node["amount"] == "-20.00", body
    assert [d["id"] for d in node["documents"]] == ["doc_02", "doc_03"]
    assert (await gql(client, NODE, {"id": "txn_b1"}, alice.headers()))["data"]["node"] is None
    assert (await gql(client, NODE, {"id": "txn_05"}, bob.headers()))["data"]["node"] is None
    mine = await gql(client, NODE, {"id": "txn_b1"}, bob.headers())
    assert mine["data"]["node"]["id"] == "txn_b1"


LINKS = """{ workspace {
  transactions(first: 50) { nodes { id documents { id transactions { id } } } }
  documentsConnection(first: 50) { nodes { id transactions { id amount } } } } }"""


async def test_links_are_batched_one_read_per_list(
    client: httpx.AsyncClient,
    store: Store,
    stocked: tuple[Tenant, Tenant],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice, _ = stocked
    reads: dict[str, int] = {"documents": 0, "transactions": 0}
    by_id, matched_to = store.documents.reads.get_many, store.transactions.matched_to

    async def count_documents(*args: Any, **kwargs: Any) -> Any:
        reads["documents"] += 1
        return await by_id(*args, **kwargs)

    async def count_transactions(*args: Any, **kwargs: Any) -> Any:
        reads["transactions"] += 1
        return await matched_to(*args, **kwargs)

    monkeypatch.setattr(store.documents.reads, "get_many", count_documents)
    monkeypatch.setattr(store.transactions, "matched_to", count_transactions)
    body = await gql(client, LINKS, None, alice.headers())
    assert "errors" not in body, body
    nodes = {n["id"]: n for n in body["data"]["workspace"]["transactions"]["nodes"]}
    assert [d["id"] for d in nodes["txn_05"]["documents"]] == ["doc_02", "doc_03"]
    assert nodes["txn_02"]["documents"] == []
    # doc_01 accounts for two transactions (one in each currency), oldest first.
    assert [t["id"] for t in nodes["txn_01"]["documents"][0]["transactions"]] == [
        "txn_01",
        "txn_07",
    ]
    documents = {n["id"]: n for n in body["data"]["workspace"]["documentsConnection"]["nodes"]}
    assert [t["amount"] for t in documents["doc_04"]["transactions"]] == ["-7.25"]
    # Eight transactions' documents: one read; their documents' transactions and the
    # connection's documents' transactions: one read each level (DataLoader cache shares them).
    assert reads == {"documents": 1, "transactions": 1}, reads


CANDIDATES = """query($first: Int) { workspace { transactions(first: $first,
  filter: {matched: {eq: false}, amount: {lt: "0"}}) {
  nodes { id candidates { transactionId outcome candidates { documentIds score } } } } } }"""


async def test_candidates_of_a_page_are_bounded_and_charged(
    client: httpx.AsyncClient,
    store: Store,
    stocked: tuple[Tenant, Tenant],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice, _ = stocked
    key = await store.api_keys.find_active(alice.api_key)
    assert key is not None
    gate = client._transport.app.state.services.expensive_calls  # type: ignore[attr-defined]
    spent: list[tuple[str, str, int]] = []
    spend = gate._spend

    def counted(key_id: str, slug: str, cost: int) -> None:
        spent.append((key_id, slug, cost))
        spend(key_id, slug, cost)

    monkeypatch.setattr(gate, "_spend", counted)
    # A page that could hold more transactions than candidates may be read for: refused
    # before anything is read, naming first and the bound.
    body = await gql(client, CANDIDATES, {"first": 50}, alice.headers())
    assert body["data"]["workspace"]["transactions"] is None, body
    message = body["errors"][0]["message"]
    assert message.startswith("Invalid request: first:") and "at most 10" in message, message
    assert spent == []  # no candidates call ran
    # A page of at most 10: each transaction's candidates, one expensive call each, in turn
    # (the key's one slot would refuse two at once).
    body = await gql(client, CANDIDATES, {"first": 10}, alice.headers())
    assert "errors" not in body, body
    nodes = body["data"]["workspace"]["transactions"]["nodes"]
    assert [n["id"] for n in nodes] == ["txn_04", "txn_02"]
    assert [n["candidates"]["transactionId"] for n in nodes] == ["txn_04", "txn_02"]
    assert spent == [(key["_id"], "transactions.candidates", 1)] * 2


async def test_candidates_beyond_the_bound_through_nodes_are_refused(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.transactions.insert_new(
        alice.org_id,
        [txn(f"txn_{i:02d}", "-1.00", TRANSACTIONS[0]["bookingDate"].date()) for i in range(12)],
    )
    ids = [f"txn_{i:02d}" for i in range(12)]
    query = """query($ids: [ID!]!) { nodes(ids: $ids) { id
      ... on BankTransaction { candidates { transactionId } } } }"""
    body = await gql(client, query, {"ids": ids}, alice.headers())
    answered = [n for n in body["data"]["nodes"] if n["candidates"] is not None]
    assert len(answered) == 10, body
    refused = {error["message"] for error in body["errors"]}
    assert refused == {
        "Invalid request: candidates: at most 10 transactions' candidates per request (each is "
        "an expensive call)"
    }, refused


GUIDE = Path(__file__).resolve().parents[2] / "docs" / "api" / "graphql.md"


async def test_the_guides_transaction_query_runs(
    client: httpx.AsyncClient, stocked: tuple[Tenant, Tenant]
) -> None:
    alice, _ = stocked
    blocks = re.findall(r"```graphql\n(query Reconcile.*?)```", GUIDE.read_text("utf-8"), re.S)
    assert len(blocks) == 1
    body = await gql(client, blocks[0], None, alice.headers())
    assert "errors" not in body, body
    workspace = body["data"]["workspace"]
    unmatched = workspace["transactions"]
    assert unmatched["totalCount"] == 2 and len(unmatched["nodes"]) == 2
    assert all(node["candidates"]["outcome"] for node in unmatched["nodes"])
    groups = {g["key"]["currency"]: g for g in workspace["transactionTotals"]["groups"]}
    assert groups["USD"]["missing"] == {"count": 1, "sum": "-99.99"}
    matched = body["data"]["matched"]
    assert matched["documents"][0]["id"] == "doc_01"
    assert [t["id"] for t in matched["documents"][0]["transactions"]] == ["txn_01", "txn_07"]
