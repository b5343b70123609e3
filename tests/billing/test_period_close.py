"""Invoices at period end: issued by the worker's job exactly once (two workers, a takeover,
concurrent closes), periods moved on, missed periods caught up, old workspaces billed lazily."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from engines.billing.plans import default_catalog
from persistence.store import Store
from resolvers import build_job_kinds
from resolvers.framework.usage_meter import ApiCallMeter
from resolvers.services.billing import subscriptions
from resolvers.services.billing.subscriptions import (
    CLOSE_DELAY,
    CLOSE_JOB,
    SWEEP_EVERY,
    schedule_period_closes,
)
from resolvers.services.processing import pipeline
from resolvers.services.processing.pipeline import process_document
from tests.billing.conftest import Billed
from tests.clock import ManualClock
from tests.conftest import Tenant
from tests.test_pipeline import Note, Skip, received

CATALOG = default_catalog()
FEB_END = datetime(2024, 2, 29, tzinfo=UTC)


def pool(store: Store, clock: ManualClock) -> WorkerPool:
    services = build_services(Settings(), store, clock=clock, api_calls=ApiCallMeter(clock))
    return WorkerPool(services, build_job_kinds(), lease_s=60)


async def ledger(store: Store) -> list[dict]:
    rows = await store.db["billing_ledger"].find({"kind": "invoice"}).to_list(None)
    return sorted(rows, key=lambda row: (row["workspaceId"], row["periodStart"]))


async def test_two_workers_issue_each_invoice_once_and_move_the_period_on(
    store: Store, clock: ManualClock, alice: Tenant, bob: Tenant
) -> None:
    await subscriptions.change_plan(store, CATALOG, alice.org_id, "pro", clock.now)
    await store.usage.add(alice.org_id, datetime(2024, 2, 3).date(), "documentsProcessed", 1010)
    await store.usage.add(alice.org_id, datetime(2024, 2, 3).date(), "apiCalls", 77)
    first, second = pool(store, clock), pool(store, clock)
    await schedule_period_closes(store)
    await schedule_period_closes(store)  # a second start: still one job (its dedupe key)
    assert await store.db["jobs"].count_documents({"kind": CLOSE_JOB}) == 1

    assert await first.run_until_idle() == 1  # before the period end: nothing to close
    assert await ledger(store) == []
    job = await store.db["jobs"].find_one({"kind": CLOSE_JOB})
    assert job["status"] == "queued" and job["runAfter"] == clock.now + SWEEP_EVERY

    clock.now = FEB_END + timedelta(minutes=2)  # ended, but within the delay: not yet
    assert await second.run_until_idle() == 1
    assert await ledger(store) == []
    job = await store.db["jobs"].find_one({"kind": CLOSE_JOB})
    assert job["runAfter"] == FEB_END + CLOSE_DELAY  # the period end is sooner than an hour
    clock.now = FEB_END + CLOSE_DELAY
    ran = await asyncio.gather(first.run_until_idle("a"), second.run_until_idle("b"))
    assert sum(ran) == 1  # the job is leased by one worker at a time

    invoices = await ledger(store)
    assert [(row["workspaceId"], row["total"]) for row in invoices] == sorted(
        # Alice: Pro from 09:30 on Jan 31, 686.5 of 696 hours: 28.60; quota
        # ⌈50·9.5/696 + 1000·686.5/696⌉ = 988, so 22 documents over at 0.05: 1.10.
        [(alice.org_id, 2970), (bob.org_id, 0)]
    )
    alice_invoice = next(row for row in invoices if row["workspaceId"] == alice.org_id)
    assert alice_invoice["userId"] == alice.user_id
    assert alice_invoice["periodStart"] == datetime(2024, 1, 31, tzinfo=UTC)
    assert alice_invoice["periodEnd"] == FEB_END
    assert [line["kind"] for line in alice_invoice["lines"]] == ["plan", "plan", "overage"]
    subscription = await store.subscriptions.for_workspace(alice.org_id)
    assert subscription is not None
    assert subscription["currentPeriodStart"] == FEB_END
    assert subscription["currentPeriodEnd"] == datetime(2024, 3, 31, tzinfo=UTC)
    assert subscription["planId"] == "pro" and len(subscription["changes"]) == 1
    job = await store.db["jobs"].find_one({"kind": CLOSE_JOB})
    assert job["runAfter"] == clock.now + SWEEP_EVERY

    # Running the job again (a retry, a restart) issues nothing more.
    clock.now += timedelta(hours=2)
    await store.db["jobs"].update_one({"_id": job["_id"]}, {"$set": {"runAfter": clock.now}})
    assert await first.run_until_idle() == 1
    assert len(await ledger(store)) == 2


async def test_a_job_taken_over_after_a_crash_does_not_issue_twice(
    store: Store, clock: ManualClock, alice: Tenant
) -> None:
    await schedule_period_closes(store)
    clock.now = FEB_END + CLOSE_DELAY
    crashed, survivor = pool(store, clock), pool(store, clock)
    job = await store.jobs.claim("crashed", 60)
    assert job is not None
    kind = crashed.kinds.get(CLOSE_JOB)
    assert kind is not None
    await kind.handler(crashed.services, job)  # did the work, died before completing the job
    assert len(await ledger(store)) == 1
    clock.advance(61)  # its lease expires; another worker takes the job over
    assert await survivor.run_until_idle() == 1
    assert len(await ledger(store)) == 1
    assert await store.jobs.complete(job["_id"], "crashed") is False


async def test_concurrent_closes_of_one_subscription_insert_one_invoice(
    store: Store, clock: ManualClock, alice: Tenant
) -> None:
    stale = await store.subscriptions.for_workspace(alice.org_id)
    assert stale is not None
    issued = await asyncio.gather(
        *(
            subscriptions.close_due_periods(store, CATALOG, dict(stale), FEB_END, FEB_END)
            for _ in range(4)
        )
    )
    assert sum(issued) == 1 and len(await ledger(store)) == 1
    moved = await store.subscriptions.for_workspace(alice.org_id)
    assert moved is not None and moved["currentPeriodStart"] == FEB_END


async def test_missed_periods_are_each_invoiced_with_their_own_usage(
    store: Store, clock: ManualClock, alice: Tenant
) -> None:
    await subscriptions.change_plan(store, CATALOG, alice.org_id, "pro", clock.now)
    # 1100 documents in the first period, 1000 in the second, none in the third (March 31 to
    # April 30: April 30 belongs to the next one), 1200 in the fourth.
    for day, count in (("2024-02-28", 1100), ("2024-03-30", 1000), ("2024-04-30", 1200)):
        when = datetime.fromisoformat(day).date()
        await store.usage.add(alice.org_id, when, "documentsProcessed", count)
    clock.now = datetime(2024, 5, 31, 1, tzinfo=UTC)  # the workers were down for three months
    issued, next_run = await subscriptions.close_periods(pool(store, clock).services, clock.now)
    assert issued == 4
    invoices = await ledger(store)
    assert [(row["periodStart"].date().isoformat(), row["total"]) for row in invoices] == [
        ("2024-01-31", 2860 + 112 * 5),  # Pro prorated (see above), 1100 - 988 over
        ("2024-02-29", 2900),
        ("2024-03-31", 2900),
        ("2024-04-30", 2900 + 200 * 5),
    ]
    subscription = await store.subscriptions.for_workspace(alice.org_id)
    assert subscription is not None
    assert subscription["currentPeriodStart"] == datetime(2024, 5, 31, tzinfo=UTC)
    assert next_run == clock.now + SWEEP_EVERY


async def test_workspaces_from_before_billing_get_a_subscription_from_the_sweep(
    store: Store, clock: ManualClock
) -> None:
    user = await store.users.get_or_create("old@example.com")
    workspace = await store.workspaces.create("Old Co", user["_id"])
    assert await store.subscriptions.for_workspace(workspace["_id"]) is None
    clock.now = workspace["createdAt"] + timedelta(days=400)
    await subscriptions.close_periods(pool(store, clock).services, clock.now)
    opened = await store.subscriptions.for_workspace(workspace["_id"])
    assert opened is not None and opened["planId"] == "free"
    # Not billed for the past: the first period contains now, on the creation day's anchor.
    assert opened["currentPeriodStart"] <= clock.now < opened["currentPeriodEnd"]
    assert opened["anchorDay"] == workspace["createdAt"].day
    assert await ledger(store) == []


async def test_billing_get_closes_an_ended_period_when_no_worker_did(
    billed: Billed, store: Store, alice: Tenant
) -> None:
    billed.clock.now = FEB_END + CLOSE_DELAY + timedelta(seconds=1)
    result = await billed.ok("billing.get", {}, alice.headers())
    assert result["subscription"]["currentPeriodStart"].startswith("2024-02-29")
    history = await billed.ok("billing.listHistory", {}, alice.headers())
    assert [entry["kind"] for entry in history["entries"]] == ["invoice"]
    assert history["entries"][0]["periodEnd"].startswith("2024-02-29")


async def test_documents_are_counted_once_when_they_finish_processing(
    store: Store, clock: ManualClock, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "STEPS", (Skip(), Note()))
    services = build_services(Settings(), store, clock=clock)
    kept = await received(store, alice, "doc_kept", "a receipt")
    skipped = await received(store, alice, "doc_skip", "skip this")
    await process_document(services, alice.org_id, "doc_kept", kept)
    await process_document(services, alice.org_id, "doc_skip", skipped)
    await process_document(services, alice.org_id, "doc_kept", kept)  # a retried job
    # Counted from the documents' outcomes (each writes its billed day with it).
    billed = await store.documents.totals.billed(alice.org_id, clock.now.date(), FEB_END.date())
    assert billed == 1  # warning counts, skipped does not, once


async def test_a_cross_interval_change_waits_for_the_renewal(
    store: Store, clock: ManualClock, alice: Tenant
) -> None:
    annual = CATALOG.plans["pro"].model_copy(
        update={"id": "pro-annual", "interval": "year", "price": 29000}
    )
    yearly = CATALOG.model_copy(update={"plans": {**CATALOG.plans, "pro-annual": annual}})
    changed = await subscriptions.change_plan(store, yearly, alice.org_id, "pro-annual", clock.now)
    assert changed["planId"] == "free" and changed["pendingPlanId"] == "pro-annual"
    await subscriptions.close_due_periods(store, yearly, changed, FEB_END)
    renewed = await store.subscriptions.for_workspace(alice.org_id)
    assert renewed is not None and renewed["planId"] == "pro-annual"
    assert renewed["pendingPlanId"] is None
    assert renewed["currentPeriodEnd"] == datetime(2025, 2, 28, tzinfo=UTC)  # anchored on the 31st


async def test_the_workers_invoice_is_listed_once_through_rest_and_graphql(
    billed: Billed, store: Store, clock: ManualClock, alice: Tenant
) -> None:
    await billed.ok("billing.change-plan", {"planId": "business"}, alice.headers())
    await schedule_period_closes(store)
    workers = [pool(store, clock), pool(store, clock)]
    clock.now = FEB_END + CLOSE_DELAY
    await asyncio.gather(*(worker.run_until_idle(f"w{i}") for i, worker in enumerate(workers)))
    clock.now += timedelta(hours=3)
    await store.db["jobs"].update_one({"kind": CLOSE_JOB}, {"$set": {"runAfter": clock.now}})
    await asyncio.gather(*(worker.run_until_idle(f"x{i}") for i, worker in enumerate(workers)))

    history = await billed.ok("billing.listHistory", {}, alice.headers())
    assert [entry["kind"] for entry in history["entries"]] == ["invoice"]
    invoice = history["entries"][0]
    # Business from 09:30 on Jan 31: 686.5 of 696 hours of 99.00 = 97.648… → 97.65.
    assert invoice["total"] == 97.65 and invoice["currency"] == "USD"
    assert [line["planId"] for line in invoice["lines"]] == ["free", "business"]
    assert (
        invoice["periodStart"].startswith("2024-01-31") and invoice["workspaceId"] == alice.org_id
    )
    body = await billed.gql(
        "{ billingListHistory(input: {}) { entries { id kind total lines { amount } } } }",
        alice.headers(org=None),
    )
    assert "errors" not in body, body
    entries = body["data"]["billingListHistory"]["entries"]
    assert [(entry["id"], entry["total"]) for entry in entries] == [(invoice["id"], "97.65")]
