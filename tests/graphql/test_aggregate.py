"""documentsAggregate: several keys at once, per currency, against a plain-Python oracle."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from decimal import Decimal
from typing import Any

import httpx
import pytest

from persistence.documents.aggregates import DocumentAggregates
from persistence.store import Store
from resolvers.resources.documents import aggregate
from resolvers.services.documents.preferences import preferred_currency
from tests.conftest import Tenant
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
async def stocked(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, DOCS)
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


async def test_month_by_category_per_currency(client: httpx.AsyncClient, stocked: Tenant) -> None:
    answer = await run(client, stocked, groupBy=["MONTH", "CATEGORY"])
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


async def test_filtered_and_fill_gaps(client: httpx.AsyncClient, stocked: Tenant) -> None:
    answer = await run(
        client,
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
    client: httpx.AsyncClient, stocked: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def error(**variables: Any) -> str:
        body = await gql(client, AGGREGATE, variables, stocked.headers())
        assert body["data"]["documentsAggregate"] is None, body
        message: str = body["errors"][0]["message"]
        return message

    for keys in (["MONTH", "YEAR"], ["CATEGORY"], []):
        assert "fillGaps: needs exactly one time key in groupBy" in await error(
            groupBy=keys, fillGaps=True
        )
    assert "more than 400" in await error(
        filter={"docDate": {"gte": "2000-01-01", "lt": "2024-01-01"}},
        groupBy=["DAY"],
        fillGaps=True,
    )
    assert "filter.amount.gt: money values have at most 2 decimal places" in await error(
        filter={"amount": {"gt": "0.001"}}, groupBy=["MONTH"]
    )
    body = await gql(client, AGGREGATE, {"groupBy": ["HOUR"]}, stocked.headers())
    assert "HOUR" in body["errors"][0]["message"] and not body.get("data")
    monkeypatch.setattr(aggregate, "MAX_GROUPS", 3)
    answer = await run(client, stocked, groupBy=["MONTH", "CATEGORY"])
    assert answer["groupsTruncated"] is True and len(answer["groups"]) == 3
    assert answer["totalCount"] == len(DOCS)


async def test_another_workspace_sees_only_its_own(
    client: httpx.AsyncClient, stocked: Tenant, bob: Tenant
) -> None:
    answer = await run(client, bob, groupBy=["CATEGORY"])
    assert answer == {"totalCount": 0, "groupsTruncated": False, "groups": []}


async def test_fill_gaps_fills_every_key_combination(
    client: httpx.AsyncClient, stocked: Tenant
) -> None:
    """MONTH × CATEGORY with fillGaps: each (category, currency) the answer holds has a group
    in every month of the range, the months without its documents at 0."""
    answer = await run(
        client,
        stocked,
        filter={"docDate": {"gte": "2023-12-01", "lte": "2024-06-30"}, "amount": {"gt": "5"}},
        groupBy=["MONTH", "CATEGORY"],
        fillGaps=True,
    )
    kept = [
        d for d in DOCS
        if d.get("docDate") and d.get("amount") is not None and d["amount"] > 5
    ]  # fmt: skip
    counts: dict[tuple[Any, ...], int] = defaultdict(int)
    for d in kept:
        counts[(d["docDate"].strftime("%Y-%m"), d["category"], d["currency"])] += 1
    combinations = {(category, currency) for _, category, currency in counts}
    months = ["2023-12", "2024-01", "2024-02", "2024-03", "2024-04", "2024-05", "2024-06"]
    got = {
        (g["key"]["month"], g["key"]["category"], g["key"]["currency"]): g["count"]
        for g in answer["groups"]
    }
    assert len(got) == len(answer["groups"]) == len(months) * len(combinations)
    assert got == {
        (month, category, currency): counts.get((month, category, currency), 0)
        for month in months
        for category, currency in combinations
    }
    assert [g["key"]["month"] for g in answer["groups"]] == sorted(
        g["key"]["month"] for g in answer["groups"]
    )
    assert answer["totalCount"] == len(kept)


CONVERTED = """query($groupBy: [DocumentGroupBy!]) {
  documentsAggregate(groupBy: $groupBy) {
    totalCount groups { key { month currency } count sum { amount }
                        converted { currency sum count unconverted } } } }"""
WITH_EXTREMES = CONVERTED.replace("count sum {", "count min { amount } sum {")


async def test_converted_sums_count_the_unconverted_apart(
    client: httpx.AsyncClient, store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Converted at each document's stored rate into the workspace's currency; a document
    with an amount and no conversion to it is counted in ``unconverted``, never summed as 0;
    rows and documents answer alike (the rows unless min or max is selected)."""
    currency = await preferred_currency(store, alice.org_id, None)
    other = "GBP" if currency != "GBP" else "CHF"
    jan = date(2024, 1, 10)
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("c1", amount=Decimal("10.00"), docDate=jan, preferredCurrency=currency,
                conversionRate=1.1),
            doc("c2", amount=Decimal("5.05"), docDate=jan, preferredCurrency=currency,
                conversionRate=0.5),
            doc("c3", amount=Decimal("5.00"), docDate=jan, preferredCurrency=currency),
            doc("c4", amount=Decimal("2.00"), docDate=jan, preferredCurrency=other,
                conversionRate=0.9),
            doc("c5", amount=None, docDate=jan, preferredCurrency=currency, conversionRate=1.1),
            doc("c6", amount=Decimal("1.00"), docDate=date(2024, 2, 1), preferredCurrency=other,
                conversionRate=0.9),
        ],
    )  # fmt: skip
    read = {"documents": 0}
    original = DocumentAggregates._from_documents

    async def counted(self: Any, *args: Any) -> Any:
        read["documents"] += 1
        return await original(self, *args)

    monkeypatch.setattr(DocumentAggregates, "_from_documents", counted)
    answers = []
    for query in (CONVERTED, WITH_EXTREMES):
        body = await gql(client, query, {"groupBy": ["MONTH"]}, alice.headers())
        assert "errors" not in body, body
        answers.append(
            {
                g["key"]["month"]: g["converted"]
                for g in body["data"]["documentsAggregate"]["groups"]
            }
        )
    assert read["documents"] == 1  # the query with min
    assert (
        answers[0]
        == answers[1]
        == {
            # 11.00 + 2.525 rounded half to even once per document (2.52)
            "2024-01": {"currency": currency, "sum": "13.52", "count": 2, "unconverted": 2},
            "2024-02": {"currency": currency, "sum": None, "count": 0, "unconverted": 1},
        }
    )
