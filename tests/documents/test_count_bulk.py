"""documents.count and documents.bulk-edit through REST."""

from __future__ import annotations

from decimal import Decimal

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result


async def test_count_totals_are_exact(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    # 0.1 + 0.2 drifts in floats; stored cents do not.
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc(f"doc_{i}", amount=Decimal("0.10") if i % 2 else Decimal("0.20"))
            for i in range(1000)
        ],
    )
    counted = result(await call(client, alice, "documents.count", {}))
    assert counted["count"] == 1000
    assert counted["totals"] == [{"currency": "EUR", "amount": 150.0}]


async def test_count_groups(client: httpx.AsyncClient, seeded: Tenant) -> None:
    by_month = result(await call(client, seeded, "documents.count", {"groupBy": "month"}))
    assert by_month["count"] == 6
    assert [(g["key"], g["count"]) for g in by_month["groups"]] == [
        ("2023-12", 1),
        ("2024-01", 2),
        ("2024-02", 2),
        (None, 1),
    ]
    february = by_month["groups"][2]["totals"]
    assert february == [{"currency": "USD", "amount": 60.09}]
    assert by_month["totals"] == [
        {"currency": "EUR", "amount": 64.5},
        {"currency": "USD", "amount": 60.09},
    ]

    by_merchant = result(
        await call(
            client,
            seeded,
            "documents.count",
            {
                "groupBy": "merchant",
                "where": {"conditions": [{"field": "amount", "op": "lt", "value": 50}]},
            },
        )
    )
    assert [(g["key"], g["count"]) for g in by_merchant["groups"]] == [
        ("Starbucks", 2),
        ("Shell", 1),
    ]
    for alias in ("date", "day"):
        by_day = result(await call(client, seeded, "documents.count", {"groupBy": alias}))
        assert by_day["groups"][0]["key"] == "2023-12-31"


async def test_count_respects_archive_and_whitelist(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    await store.documents.writes.set_archived(seeded.org_id, ["doc_b"], archived=True)
    assert result(await call(client, seeded, "documents.count", {}))["count"] == 5
    assert result(await call(client, seeded, "documents.count", {"archived": "only"}))["count"] == 1
    assert (
        result(await call(client, seeded, "documents.count", {"archived": "include"}))["count"] == 6
    )
    narrow = await call(
        client,
        seeded,
        "documents.count",
        {
            "where": {
                "conditions": [
                    {"field": "expenseLocation.primary.city", "op": "eq", "value": "New York"}
                ]
            }
        },
    )
    assert (
        narrow.status_code == 400
        and "cannot be filtered here" in narrow.json()["error"]["errorMessage"]
    )
    bad_group = await call(client, seeded, "documents.count", {"groupBy": "colour"})
    assert bad_group.status_code == 400


async def test_bulk_edit_preview_then_execute(client: httpx.AsyncClient, seeded: Tenant) -> None:
    body = {"merchant": "starbucks", "changes": {"category": "Coffee"}}
    preview = result(await call(client, seeded, "documents.bulk-edit", body))
    assert preview["dryRun"] is True and preview["matched"] == 2
    assert {d["id"] for d in preview["documents"]} == {"doc_a", "doc_e"}
    assert preview["documents"][0]["proposedChanges"] == [
        {"field": "category", "oldValue": "Meals", "newValue": "Coffee"}
    ]
    assert "Shell" in preview["merchants"] and "Software" in preview["categories"]
    unchanged = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert unchanged["category"] == "Meals"

    # Executing is gated: nothing changes until an owner approves the stored call.
    waiting = result(await call(client, seeded, "documents.bulk-edit", {**body, "dryRun": False}))
    assert waiting["status"] == "approval_required"
    assert waiting["capability"] == {"name": "documentsBulkEdit", "slug": "documents.bulk-edit"}
    still = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert still["category"] == "Meals"
    approved = result(
        await call(
            client,
            seeded,
            "approvals.approve",
            {"approvalRequestId": waiting["approvalRequestId"]},
        )
    )
    done = approved["result"]
    assert done["matched"] == 2 and done["modified"] == 2
    changed = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert changed["category"] == "Coffee"
    assert changed["editHistory"][0]["via"] == "documents.bulk-edit"
    found = result(
        await call(
            client, seeded, "documents.search", {"query": "coffee", "searchType": "similarity"}
        )
    )
    assert {d["id"] for d in found["documents"]} == {"doc_a", "doc_e"}


async def test_bulk_edit_query_filter_and_guards(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    by_query = result(
        await call(
            client,
            seeded,
            "documents.bulk-edit",
            {"query": "cold brew", "changes": {"merchant": "Starbucks Reserve"}},
        )
    )
    assert [d["id"] for d in by_query["documents"]] == ["doc_e"]
    no_filter = await call(client, seeded, "documents.bulk-edit", {"changes": {"category": "X"}})
    assert (
        no_filter.status_code == 400
        and "at least one filter" in no_filter.json()["error"]["errorMessage"]
    )
    no_change = await call(
        client, seeded, "documents.bulk-edit", {"merchant": "Shell", "changes": {}}
    )
    assert no_change.status_code == 400

    await store.documents.writes.insert_many(
        seeded.org_id, [doc(f"doc_many{i}", merchant="Uber") for i in range(1001)]
    )
    too_many = await call(
        client,
        seeded,
        "documents.bulk-edit",
        {"merchant": "uber", "changes": {"category": "Transport"}, "dryRun": False},
    )
    assert too_many.status_code == 400
    assert "would change 1001 documents; at most 1,000" in too_many.json()["error"]["errorMessage"]
    assert (
        result(
            await call(
                client,
                seeded,
                "documents.count",
                {
                    "where": {
                        "conditions": [{"field": "category", "op": "eq", "value": "Transport"}]
                    }
                },
            )
        )["count"]
        == 0
    )
