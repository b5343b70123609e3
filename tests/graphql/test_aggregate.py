"""documentsAggregate: several keys at once, per currency, against a plain-Python oracle."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import date
from decimal import Decimal
from typing import Any

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.resources.documents import aggregate
from tests.conftest import Tenant, asgi_client
from tests.documents.conftest import doc
from tests.graphql.helpers import gql

DOCS = [
    doc(
        f"doc_{i:02d}",
        amount=Decimal(f"{3 + i}.{i % 10}5") if i % 7 else None,
        taxAmount=Decimal(f"0.{i % 9}0") if i % 2 else None,
        currency="USD" if i % 4 == 0 else "EUR",
        docDate=date(2024, 1 + (i * 5) % 6, 1 + i % 28) if i % 11 else None,
        category=["Fuel", "Meals", "Travel"][i % 3],
        paymentStatus=["paid", "unpaid"][i % 2],
    )
    for i in range(40)
]

AGGREGATE = """query($filter: DocumentFilter, $groupBy: [DocumentGroupBy!], $fillGaps: Boolean) {
  documentsAggregate(filter: $filter, groupBy: $groupBy, fillGaps: $fillGaps) {
    totalCount groupsTruncated
    groups { key { month category currency paymentStatus } count
             sum { amount taxAmount } avg { amount }
             min { amount docDate } max { amount docDate } }
  }
}"""


@pytest.fixture
async def service(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(store, registry) as http:
        yield http


@pytest.fixture
async def stocked(store: Store, alice: Tenant) -> Tenant:
    await store.documents.insert_many(alice.org_id, DOCS)
    return alice


async def run(client: httpx.AsyncClient, tenant: Tenant, **variables: Any) -> dict[str, Any]:
    body = await gql(client, AGGREGATE, variables, tenant.headers())
    assert "errors" not in body, body
    answer: dict[str, Any] = body["data"]["documentsAggregate"]
    return answer


def oracle(docs: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for d in docs:
        month = d["docDate"].strftime("%Y-%m") if d.get("docDate") else None
        groups[(month, d["category"], d["currency"])].append(d)
    expected = {}
    for key, members in groups.items():
        amounts = [d["amount"] for d in members if d.get("amount") is not None]
        taxes = [d["taxAmount"] for d in members if d.get("taxAmount") is not None]
        dates = [d["docDate"] for d in members if d.get("docDate")]
        expected[key] = {
            "count": len(members),
            "sum": {
                "amount": str(sum(amounts)) if amounts else None,
                "taxAmount": str(sum(taxes)) if taxes else None,
            },
            "avg": {
                "amount": str((sum(amounts) / len(amounts)).quantize(Decimal("0.01")))
                if amounts
                else None
            },
            "min": {
                "amount": str(min(amounts)) if amounts else None,
                "docDate": min(dates).isoformat() if dates else None,
            },
            "max": {
                "amount": str(max(amounts)) if amounts else None,
                "docDate": max(dates).isoformat() if dates else None,
            },
        }
    return expected


async def test_month_by_category_per_currency(service: httpx.AsyncClient, stocked: Tenant) -> None:
    answer = await run(service, stocked, groupBy=["MONTH", "CATEGORY"])
    assert answer["totalCount"] == len(DOCS) and answer["groupsTruncated"] is False
    got = {
        (g["key"]["month"], g["key"]["category"], g["key"]["currency"]): {
            k: g[k] for k in ("count", "sum", "avg", "min", "max")
        }
        for g in answer["groups"]
    }
    assert got == oracle(DOCS)
    assert all(g["key"]["paymentStatus"] is None for g in answer["groups"])
    months = [g["key"]["month"] for g in answer["groups"]]
    assert months == sorted(months, key=lambda m: (m is None, m or ""))  # time order, null last


async def test_filtered_and_fill_gaps(service: httpx.AsyncClient, stocked: Tenant) -> None:
    answer = await run(
        service,
        stocked,
        filter={"docDate": {"gte": "2023-11-01", "lt": "2024-08-01"}, "currency": {"eq": "eur"}},
        groupBy=["MONTH"],
        fillGaps=True,
    )
    months = [g["key"]["month"] for g in answer["groups"]]
    assert months == [
        "2023-11", "2023-12", "2024-01", "2024-02", "2024-03", "2024-04", "2024-05",
        "2024-06", "2024-07",
    ]  # fmt: skip
    kept = [
        d for d in DOCS
        if d["currency"] == "EUR" and d.get("docDate") and d["docDate"] < date(2024, 8, 1)
    ]  # fmt: skip
    assert answer["totalCount"] == len(kept) == sum(g["count"] for g in answer["groups"])
    empty = next(g for g in answer["groups"] if g["key"]["month"] == "2023-11")
    assert empty["count"] == 0 and empty["sum"] == {"amount": None, "taxAmount": None}


async def test_bounds_and_mistakes_are_clear_errors(
    service: httpx.AsyncClient, stocked: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def error(**variables: Any) -> str:
        body = await gql(service, AGGREGATE, variables, stocked.headers())
        assert body["data"]["documentsAggregate"] is None, body
        message: str = body["errors"][0]["message"]
        return message

    assert "fillGaps: needs groupBy with one time key alone" in await error(
        groupBy=["MONTH", "CATEGORY"], fillGaps=True
    )
    assert "more than 400" in await error(
        filter={"docDate": {"gte": "2000-01-01", "lt": "2024-01-01"}},
        groupBy=["DAY"],
        fillGaps=True,
    )
    assert "filter.amount.gt: money values have at most 2 decimal places" in await error(
        filter={"amount": {"gt": "0.001"}}, groupBy=["MONTH"]
    )
    body = await gql(service, AGGREGATE, {"groupBy": ["HOUR"]}, stocked.headers())
    assert "HOUR" in body["errors"][0]["message"] and not body.get("data")
    monkeypatch.setattr(aggregate, "MAX_GROUPS", 3)
    answer = await run(service, stocked, groupBy=["MONTH", "CATEGORY"])
    assert answer["groupsTruncated"] is True and len(answer["groups"]) == 3
    assert answer["totalCount"] == len(DOCS)


async def test_another_workspace_sees_only_its_own(
    service: httpx.AsyncClient, stocked: Tenant, bob: Tenant
) -> None:
    answer = await run(service, bob, groupBy=["CATEGORY"])
    assert answer == {"totalCount": 0, "groupsTruncated": False, "groups": []}
