"""convertedAmount: the amount in the workspace's preferred currency, shown, sorted and filtered
on every face, so ¥394,713 no longer sorts above €2,000 (issue 38, item 9)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result

RATED = [
    # ¥394,713 at 0.0061 € is €2,407.75; $500 at 0.9 is €450; €2,000 at 1.
    doc("doc_yen", amount=Decimal("394713"), currency="JPY", conversionRate=0.0061),
    doc("doc_usd", amount=Decimal("500.00"), currency="USD", conversionRate=0.9),
    doc("doc_eur", amount=Decimal("2000.00"), currency="EUR", conversionRate=1.0),
    doc("doc_norate", amount=Decimal("99.00"), currency="XTS"),  # no rate known
]


@pytest.fixture
async def rated(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(
        alice.org_id, [{**d, "preferredCurrency": "EUR"} for d in RATED]
    )
    return alice


async def search(client: httpx.AsyncClient, tenant: Tenant, **body: Any) -> list[dict[str, Any]]:
    body = {"useSearch": False, "requiredFields": ["convertedAmount"], **body}
    return list(result(await call(client, tenant, "documents.search", body))["documents"])


async def test_shown_in_the_preferred_currency(client: httpx.AsyncClient, rated: Tenant) -> None:
    found = {d["id"]: d["convertedAmount"] for d in await search(client, rated, limit=10)}
    assert found == {"doc_yen": 2407.75, "doc_usd": 450.0, "doc_eur": 2000.0, "doc_norate": None}


async def test_sorted_across_currencies_then_by_id(
    client: httpx.AsyncClient, rated: Tenant
) -> None:
    by_written = [d["id"] for d in await search(client, rated, sortBy="amount", sortOrder=-1)]
    assert by_written[0] == "doc_yen"  # 394,713 "is" the largest as written
    largest = await search(client, rated, sortBy="convertedAmount", sortOrder=-1, limit=2)
    assert [d["id"] for d in largest] == ["doc_yen", "doc_eur"]
    # Pages by cursor keep the converted order; a document without a rate sorts as every
    # missing value does (first ascending, last descending).
    first = result(
        await call(
            client,
            rated,
            "documents.search",
            {"useSearch": False, "sortBy": "convertedAmount", "sortOrder": 1, "limit": 2},
        )
    )
    rest = result(
        await call(
            client,
            rated,
            "documents.search",
            {
                "useSearch": False,
                "sortBy": "convertedAmount",
                "sortOrder": 1,
                "limit": 2,
                "cursor": first["nextCursor"],
            },
        )
    )
    ascending = [d["id"] for d in first["documents"] + rest["documents"]]
    assert ascending == ["doc_norate", "doc_usd", "doc_eur", "doc_yen"]
    assert set(ascending) == {d["_id"] for d in RATED}


async def test_a_where_field_for_search_and_count(client: httpx.AsyncClient, rated: Tenant) -> None:
    where = {"conditions": [{"field": "convertedAmount", "op": "gte", "value": "1000"}]}
    found = await search(client, rated, where=where)
    assert sorted(d["id"] for d in found) == ["doc_eur", "doc_yen"]
    counted = result(await call(client, rated, "documents.count", {"where": where}))
    assert counted["count"] == 2
    missing = {"conditions": [{"field": "convertedAmount", "op": "exists", "value": False}]}
    assert [d["id"] for d in await search(client, rated, where=missing)] == ["doc_norate"]
    bad = await call(
        client,
        rated,
        "documents.search",
        {"where": {"conditions": [{"field": "convertedAmount", "op": "gt", "value": "1.234"}]}},
    )
    assert bad.status_code == 400 and "conditions[0]" in bad.json()["error"]["errorMessage"]


async def test_typed_graphql_filter_and_order(client: httpx.AsyncClient, rated: Tenant) -> None:
    query = """{ documentsConnection(filter: {convertedAmount: {gt: "400"}},
                 orderBy: [{field: CONVERTED_AMOUNT, direction: DESC}], first: 5) {
                 nodes { id convertedAmount preferredCurrency } } }"""
    answer = await client.post("/v1/graphql", json={"query": query}, headers=rated.headers())
    assert "errors" not in answer.json(), answer.text
    nodes = answer.json()["data"]["documentsConnection"]["nodes"]
    assert [n["id"] for n in nodes] == ["doc_yen", "doc_eur", "doc_usd"]
    assert nodes[0] == {"id": "doc_yen", "convertedAmount": "2407.75", "preferredCurrency": "EUR"}
