"""document-updated rules after a correction and scheduled rules, through the durable jobs."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from persistence.store import Store
from resolvers import build_job_kinds
from resolvers.resources.rules import next_run
from schema.rules import RuleSchedule
from tests.clock import ManualClock
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result
from tests.rules.stand_ins import Calls
from tests.rules.test_firing import document, rule_stats, save, with_stand_ins


def pool(store: Store) -> WorkerPool:
    return WorkerPool(
        build_services(Settings(), store, registry=with_stand_ins()), build_job_kinds()
    )


async def queued(store: Store, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (
        await store.db["jobs"].find({"kind": kind, "status": "queued"}).to_list(None)
    )
    return found


async def test_a_correction_runs_the_updated_rules_in_a_job(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    activity = await store.activity.create(alice.org_id, "upload", ["doc_ride"], {})
    await store.activity.set_status(alice.org_id, activity["_id"], "processed", "Extracted UBER.")
    await store.documents.writes.insert_many(
        alice.org_id,
        [doc("doc_ride", merchant="UBER BV", category="Other", activityId=activity["_id"])],
    )
    # No document-updated rule yet: a correction queues nothing.
    await call(client, alice, "documents.update", {"id": "doc_ride", "summary": "airport"})
    assert await queued(store, "run-update-rules") == []

    rule = await save(client, alice, "When a receipt from Uber is updated, categorize it as Travel")
    assert rule["triggerType"] == "document-updated"
    result(await call(client, alice, "documents.update", {"id": "doc_ride", "amount": 31.5}))
    assert (await document(client, alice, "doc_ride"))["category"] == "Other"  # not yet
    assert len(await queued(store, "run-update-rules")) == 1

    assert await pool(store).run_until_idle() == 1
    ride = await document(client, alice, "doc_ride")
    assert ride["category"] == "Travel" and ride["amount"] == 31.5
    assert [(e["field"], e["via"]) for e in ride["editHistory"]] == [
        ("summary", "documents.update"),
        ("amount", "documents.update"),
        ("category", "rule"),
    ]
    reasoning = (await store.activity.get(alice.org_id, activity["_id"]) or {})["reasoning"]
    assert reasoning == (
        f"Extracted UBER. After an update: Rule '{rule['name']}': set category to Travel."
    )
    # The rule's own change is no correction: nothing more is queued.
    assert await queued(store, "run-update-rules") == []
    stats = await rule_stats(client, alice, rule["id"])
    assert (stats["runs"], stats["documentsMatched"], stats["actionsApplied"]) == (1, 1, 1)

    # Bulk edits are corrections too (this workspace runs them without approval).
    await store.workspaces.set_gated(alice.org_id, "documents.bulk-edit", False)
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_ride2", merchant="Uber")])
    result(
        await call(
            client,
            alice,
            "documents.bulk-edit",
            {"merchant": "Uber", "changes": {"category": "Meals"}, "dryRun": False},
        )
    )
    assert await pool(store).run_until_idle() == 1
    assert (await document(client, alice, "doc_ride2"))["category"] == "Travel"


def test_next_run_times() -> None:
    at = datetime(2026, 11, 23, 10, 30, tzinfo=UTC)  # a Monday
    assert next_run(RuleSchedule(frequency="daily", hour=18), at) == at.replace(hour=18, minute=0)
    assert next_run(RuleSchedule(frequency="daily", hour=9), at) == datetime(
        2026, 11, 24, 9, tzinfo=UTC
    )
    assert next_run(RuleSchedule(frequency="weekly", weekday="monday", hour=9), at) == datetime(
        2026, 11, 30, 9, tzinfo=UTC
    )
    assert next_run(RuleSchedule(frequency="weekly", weekday="friday"), at) == datetime(
        2026, 11, 27, 6, tzinfo=UTC
    )
    assert next_run(RuleSchedule(frequency="monthly", dayOfMonth=1), at) == datetime(
        2026, 12, 1, 6, tzinfo=UTC
    )
    december = datetime(2026, 12, 31, 23, tzinfo=UTC)
    assert next_run(RuleSchedule(frequency="monthly", dayOfMonth=28), december) == datetime(
        2027, 1, 28, 6, tzinfo=UTC
    )


async def test_a_scheduled_rule_runs_at_its_time_and_acts_once_per_document(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    Calls.made.clear()
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("doc_big", merchant="Acme", docType="invoice", amount=Decimal("900.00")),
            doc("doc_small", merchant="Acme", docType="invoice", amount=Decimal("50.00")),
        ],
    )
    rule = await save(client, alice, "Every day at 18:00, send invoices over 100 EUR to Xero")
    assert rule["triggerType"] == "schedule"
    assert await pool(store).run_until_idle() == 0  # not due yet

    clock = ManualClock()
    clock.advance(26 * 3600)  # past the next 18:00
    later = Store(store.db, clock)
    assert await pool(later).run_until_idle() == 1
    sends = [c[3]["documentId"] for c in Calls.made if c[0] == "integrations.send"]
    assert sends == ["doc_big"]
    jobs = await queued(store, "run-scheduled-rule")
    assert len(jobs) == 1 and jobs[0]["runAfter"].replace(tzinfo=UTC) > clock.now
    assert jobs[0]["runAfter"].hour == 18

    clock.advance(24 * 3600)  # the next run: the same document is not sent again
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_new", merchant="Beta", docType="invoice", amount=Decimal("300.00"))]
    )
    assert await pool(later).run_until_idle() == 1
    sends = [c[3]["documentId"] for c in Calls.made if c[0] == "integrations.send"]
    assert sends == ["doc_big", "doc_new"]
    stats = await rule_stats(client, alice, rule["id"])
    assert (stats["runs"], stats["documentsMatched"], stats["actionsApplied"]) == (2, 2, 2)

    # Disabled: the next run does nothing and the job ends.
    result(await call(client, alice, "rules.disable", {"id": rule["id"]}))
    clock.advance(24 * 3600)
    assert await pool(later).run_until_idle() == 1
    assert await queued(store, "run-scheduled-rule") == []
    assert (await rule_stats(client, alice, rule["id"]))["runs"] == 2
    enabled = result(await call(client, alice, "rules.enable", {"id": rule["id"]}))["rule"]
    assert enabled["nextRunAt"] and len(await queued(store, "run-scheduled-rule")) == 1
