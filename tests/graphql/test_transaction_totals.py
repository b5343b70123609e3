"""Workspace.transactionTotals: spent vs receipted per month and currency, computed in the store,
against a hand-computed answer and a plain-Python oracle."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

import httpx
import pytest

from persistence.money import from_cents
from persistence.store import Store
from tests.conftest import Tenant
from tests.graphql.helpers import gql
from tests.graphql.transaction_data import TRANSACTIONS, txn

TOTALS = """query($filter: TransactionFilter, $groupBy: [TransactionGroupBy!]) {
  workspace { transactionTotals(filter: $filter, groupBy: $groupBy) {
    totalCount groupsTruncated
    groups { key { month currency account matched } count
      spent { count sum } receipted { count sum } missing { count sum }
      received { count sum } } } }
}"""


@pytest.fixture
async def stocked(store: Store, alice: Tenant, bob: Tenant) -> Tenant:
    await store.transactions.insert_new(alice.org_id, TRANSACTIONS)
    await store.transactions.insert_new(
        bob.org_id, [txn("txn_b1", "-5.00", TRANSACTIONS[0]["bookingDate"].date())]
    )
    return alice


async def totals(client: httpx.AsyncClient, tenant: Tenant, **variables: Any) -> dict[str, Any]:
    body = await gql(client, TOTALS, variables, tenant.headers())
    assert "errors" not in body, body
    answer: dict[str, Any] = body["data"]["workspace"]["transactionTotals"]
    return answer


def flows(answer: dict[str, Any]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {
        (g["key"]["month"], g["key"]["currency"]): {
            name: (g[name]["count"], g[name]["sum"])
            for name in ("spent", "receipted", "missing", "received")
        }
        for g in answer["groups"]
    }


# Worked out by hand from transaction_data.TRANSACTIONS.
BY_HAND = {
    ("2025-01", "EUR"): {
        "spent": (2, "-52.50"),  # txn_01 -42.50 (receipted), txn_02 -10.00
        "receipted": (1, "-42.50"),
        "missing": (1, "-10.00"),
        "received": (1, "1500.00"),  # txn_03
    },
    ("2025-02", "EUR"): {
        "spent": (2, "-27.25"),  # txn_05 -20.00 and txn_06 -7.25, both receipted
        "receipted": (2, "-27.25"),
        "missing": (0, "0.00"),
        "received": (1, "250.00"),  # txn_08
    },
    ("2025-02", "USD"): {
        "spent": (2, "-111.99"),  # txn_04 -99.99, txn_07 -12.00 (receipted)
        "receipted": (1, "-12.00"),
        "missing": (1, "-99.99"),
        "received": (0, "0.00"),
    },
}


def oracle(records: list[dict[str, Any]]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The same answer computed in Python over every record."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[(record["bookingDate"].strftime("%Y-%m"), record["currency"])].append(record)

    def flow(members: list[dict[str, Any]]) -> tuple[int, str]:
        total = sum((from_cents(m["amount"]) for m in members), Decimal("0.00"))
        return len(members), str(total)

    return {
        key: {
            "spent": flow([m for m in members if m["amount"] < 0]),
            "receipted": flow([m for m in members if m["amount"] < 0 and m["matched"]]),
            "missing": flow([m for m in members if m["amount"] < 0 and not m["matched"]]),
            "received": flow([m for m in members if m["amount"] > 0]),
        }
        for key, members in groups.items()
    }


async def test_spent_vs_receipted_per_month(client: httpx.AsyncClient, stocked: Tenant) -> None:
    answer = await totals(client, stocked, groupBy=["MONTH"])
    assert flows(answer) == BY_HAND == oracle(TRANSACTIONS)
    assert [(g["key"]["month"], g["key"]["currency"]) for g in answer["groups"]] == sorted(BY_HAND)
    assert answer["totalCount"] == 8 and answer["groupsTruncated"] is False
    assert all(g["key"]["account"] is None for g in answer["groups"])  # not asked for


async def test_filtered_and_grouped_by_several_keys(
    client: httpx.AsyncClient, stocked: Tenant
) -> None:
    answer = await totals(
        client,
        stocked,
        filter={"bookingDate": {"gte": "2025-02-01"}, "amount": {"lt": "0"}},
        groupBy=["MONTH", "MATCHED", "ACCOUNT"],
    )
    got = {
        (g["key"]["currency"], g["key"]["matched"], g["key"]["account"]): (
            g["count"],
            g["spent"]["sum"],
        )
        for g in answer["groups"]
    }
    assert got == {
        ("EUR", True, "DE00 1234"): (2, "-27.25"),
        ("USD", False, "DE00 1234"): (1, "-99.99"),
        ("USD", True, "DE00 1234"): (1, "-12.00"),
    }
    assert answer["totalCount"] == 4


async def test_a_bad_filter_names_its_place(client: httpx.AsyncClient, stocked: Tenant) -> None:
    body = await gql(
        client, TOTALS, {"filter": {"not": {"amount": {"gt": "0.001"}}}}, stocked.headers()
    )
    assert "filter.not.amount.gt" in body["errors"][0]["message"], body
