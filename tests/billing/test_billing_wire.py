"""Billing on the real protocol (SecantusDB over TCP): storage from GridFS, concurrent usage
increments, history pages, and invoices issued once by concurrent closes."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta

import pytest

from engines.billing.plans import default_catalog
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.billing import subscriptions
from tests.conftest import asgi_client, make_tenant, worker_pool
from tests.test_uploads_wire import b64, fixture

pytestmark = pytest.mark.wire
CATALOG = default_catalog()


async def test_storage_is_the_size_of_the_workspaces_originals(wire_store: Store) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    bob = await make_tenant(wire_store, "bob@example.com", "Bob Ltd")
    await wire_store.files.put(alice.org_id, "doc_1", b"a" * 300_000, "a.pdf", "application/pdf")
    await wire_store.files.put(alice.org_id, "doc_2", b"b" * 1234, "b.png", "image/png")
    await wire_store.files.put(bob.org_id, "doc_3", b"c" * 99, "c.png", "image/png")
    assert await wire_store.files.bytes_stored(alice.org_id) == 301_234
    assert await wire_store.files.bytes_stored(bob.org_id) == 99
    assert await wire_store.files.bytes_stored("org_nobody") == 0


async def test_concurrent_usage_increments_are_all_kept(wire_store: Store) -> None:
    day = date(2024, 2, 29)
    await asyncio.gather(
        *(wire_store.usage.add("org_a", day, "apiCalls", 3) for _ in range(40)),
        *(wire_store.usage.add("org_a", day, "documentsProcessed") for _ in range(25)),
        wire_store.usage.add("org_a", day + timedelta(days=1), "apiCalls", 1000),
        wire_store.usage.add("org_b", day, "apiCalls", 1000),
    )
    totals = await wire_store.usage.totals("org_a", day, day + timedelta(days=1))
    assert totals == {"apiCalls": 120, "documentsProcessed": 25}


async def test_history_pages_and_concurrent_closes_on_the_wire(wire_store: Store) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    start = datetime(2024, 1, 31, tzinfo=UTC)
    ids = []
    for index in range(9):
        entry = await subscriptions.add_charge(
            wire_store,
            CATALOG,
            alice.user_id,
            100,
            f"c{index}",
            start + timedelta(hours=index // 3),
        )
        ids.append(entry["_id"])
    seen: list[str] = []
    after = None
    while True:
        rows = await wire_store.billing_ledger.page_for_user(alice.user_id, 2, after)
        if not rows:
            break
        seen += [row["_id"] for row in rows]
        after = (rows[-1]["issuedAt"], rows[-1]["_id"])
    assert sorted(seen) == sorted(ids) and len(seen) == 9

    subscription = await wire_store.subscriptions.for_workspace(alice.org_id)
    assert subscription is not None
    later = subscription["currentPeriodEnd"] + timedelta(days=70)
    issued = await asyncio.gather(
        *(
            subscriptions.close_due_periods(wire_store, CATALOG, subscription, later)
            for _ in range(3)
        )
    )
    invoices = await wire_store.billing_ledger.for_subscription(subscription["_id"])
    assert sum(issued) == len(invoices) >= 2
    starts = [row["periodStart"] for row in invoices]
    assert len(starts) == len(set(starts))


async def test_an_upload_counts_as_processed_and_its_original_as_storage(
    wire_store: Store, registry: Registry
) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    pdf = fixture("text-layer.pdf")
    headers = alice.headers()
    async with asgi_client(wire_store, registry) as http:
        accepted = await http.post(
            "/v1/capabilities/files.upload",
            json={"fileName": "invoice.pdf", "base64Data": b64(pdf)},
            headers=headers,
        )
        assert accepted.status_code == 200, accepted.text
        before = await http.post("/v1/capabilities/billing.get", json={}, headers=headers)
        assert before.json()["data"]["result"]["usage"]["documentsProcessed"] == 0
        assert await worker_pool(wire_store, count=1).run_until_idle() == 1
        after = await http.post("/v1/capabilities/billing.get", json={}, headers=headers)
    usage = after.json()["data"]["result"]["usage"]
    assert usage["documentsProcessed"] == 1
    assert usage["storageBytes"] == len(pdf)
    assert usage["apiCalls"] == 3  # the upload and both billing.get calls
