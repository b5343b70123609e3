"""Saved rules acting on documents: matching with the where compiler, actions through the
documents repository (edit history, rollups), capabilities through the registry, stats, and
failures that are recorded instead of raised."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from app.host.config import Settings
from app.host.services import build_services
from persistence.store import Store
from resolvers import build_registry
from resolvers.framework.registry import Registry
from resolvers.framework.services import Services
from resolvers.resources import documents, files, rules, workspaces
from resolvers.services.rules.rule_runner import RuleEvent, run_document_rules
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result
from tests.rules import stand_ins
from tests.rules.stand_ins import Calls

PROCESSED = RuleEvent(trigger="document-processed", key="processed")
SEND_AWS = "When an invoice from Amazon Web Services over 100 EUR arrives, send it to Xero"


@pytest.fixture(autouse=True)
def fresh_calls() -> Iterator[None]:
    Calls.made.clear()
    Calls.gated = False
    yield
    Calls.made.clear()
    Calls.gated = False


def without_integrations() -> Registry:
    """A service with neither integrations nor the rules' capabilities (rules.resume)."""
    return Registry.from_modules([documents, files, workspaces]).freeze()


def with_stand_ins() -> Registry:
    return Registry.from_modules([documents, files, rules, workspaces, stand_ins]).freeze()


def services(store: Store, registry: Registry | None = None) -> Services:
    """The services a rule runs with (the real registry unless ``registry``)."""
    return build_services(Settings(), store, registry=registry or build_registry())


def aws_invoice(doc_id: str, merchant: str = "Amazon Web Services", **fields: Any) -> Any:
    """An Amazon Web Services invoice over 100 EUR (150 unless ``amount`` says otherwise)."""
    return doc(
        doc_id,
        merchant=merchant,
        docType="invoice",
        **({"amount": Decimal("150.00"), "currency": "EUR"} | fields),
    )


async def save(client: httpx.AsyncClient, tenant: Tenant, sentence: str) -> dict[str, Any]:
    saved: dict[str, Any] = result(
        await call(
            client, tenant, "rules.execute", {"naturalLanguageRule": sentence, "confirm": True}
        )
    )
    return saved["rule"]


async def rule_stats(client: httpx.AsyncClient, tenant: Tenant, rule_id: str) -> dict[str, Any]:
    listed = result(await call(client, tenant, "rules.list", {"includeDisabled": True}))
    stats: dict[str, Any] = next(r for r in listed["rules"] if r["id"] == rule_id)["stats"]
    return stats


async def document(client: httpx.AsyncClient, tenant: Tenant, doc_id: str) -> dict[str, Any]:
    found: dict[str, Any] = result(await call(client, tenant, "documents.get", {"id": doc_id}))
    return found["document"]


async def rollup_rows(store: Store, workspace_id: str) -> list[tuple[Any, ...]]:
    rows = await store.db["document_rollups"].find({"workspaceId": workspace_id}).to_list(None)
    # Canonical text: a packed record's cells are in the order its writes created them.
    return sorted(
        tuple(
            sorted(
                (k, json.dumps(v, sort_keys=True, default=str))
                for k, v in row.items()
                if k != "_id"
            )
        )
        for row in rows
    )


async def test_a_matching_rule_sets_the_category_with_history_stats_and_rollups(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("doc_uber", merchant="UBER *TRIP", category="Transport", amount=Decimal("23.40")),
            doc("doc_bolt", merchant="Bolt Operations", docType="invoice", category="Transport"),
            doc("doc_shell", merchant="Shell", category="Fuel"),
        ],
    )
    rule = await save(client, alice, "Categorize all Uber and Bolt receipts as Travel")
    running = services(store)
    said = {
        doc_id: await run_document_rules(running, alice.org_id, doc_id, PROCESSED)
        for doc_id in ("doc_uber", "doc_bolt", "doc_shell")
    }
    assert said == {
        "doc_uber": [f"Rule '{rule['name']}': set category to Travel."],
        "doc_bolt": [],  # an invoice: the rule names receipts
        "doc_shell": [],
    }
    uber = await document(client, alice, "doc_uber")
    assert uber["category"] == "Travel"
    assert [
        (e["field"], e["oldValue"], e["newValue"], e["via"], e["editedBy"])
        for e in uber["editHistory"]
    ] == [("category", "Transport", "Travel", "rule", rule["id"])]
    assert (await document(client, alice, "doc_bolt"))["category"] == "Transport"

    stats = await rule_stats(client, alice, rule["id"])
    assert (stats["runs"], stats["documentsMatched"], stats["actionsApplied"]) == (3, 1, 1)
    assert stats["actionsFailed"] == 0 and stats["lastRunAt"] and stats["lastError"] is None

    # The dashboard rollups moved with the change: the same rows as a recount.
    counted = result(await call(client, alice, "documents.count", {"groupBy": "category"}))
    assert {g["key"]: g["count"] for g in counted["groups"]} == {
        "Travel": 1,
        "Transport": 1,
        "Fuel": 1,
    }
    kept = await rollup_rows(store, alice.org_id)
    await store.documents.totals.rebuild_rollups(alice.org_id)
    assert kept == await rollup_rows(store, alice.org_id)

    # The same event again (a retried job) does nothing twice.
    assert await run_document_rules(running, alice.org_id, "doc_uber", PROCESSED) == []
    assert (await rule_stats(client, alice, rule["id"]))["actionsApplied"] == 1


async def test_archive_mark_recurring_and_rename(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("doc_tiny", merchant="Kiosk", amount=Decimal("0.50"), currency="USD"),
            doc(
                "doc_copy",
                merchant="Kiosk",
                amount=Decimal("0.50"),
                currency="USD",
                duplicateOf="doc_tiny",
            ),
            doc(
                "doc_netflix",
                merchant="Netflix International",
                docType="invoice",
                amount=Decimal("12.99"),
            ),
            doc("doc_amzn", merchant="AMZN Mktp DE", amount=Decimal("30.00")),
        ],
    )
    await store.db["documents"].update_one(
        {"_id": "doc_tiny"}, {"$set": {"duplicates": ["doc_copy"]}}
    )
    await save(client, alice, "Archive receipts under 1 dollar")
    await save(client, alice, "Mark anything from Netflix or Spotify as a monthly subscription")
    await save(client, alice, "Rename AMZN Mktp to Amazon")
    for doc_id in ("doc_tiny", "doc_netflix", "doc_amzn"):
        await run_document_rules(services(store), alice.org_id, doc_id, PROCESSED)

    tiny = await document(client, alice, "doc_tiny")
    assert tiny["archived"] is True
    assert (await document(client, alice, "doc_copy"))["archived"] is True  # its duplicate too
    assert [e["field"] for e in tiny["editHistory"]] == ["archived"]
    netflix = await document(client, alice, "doc_netflix")
    assert (netflix["isRecurring"], netflix["recurringType"]) == (True, "monthly")
    assert {e["field"] for e in netflix["editHistory"]} == {"isRecurring", "recurringType"}
    amzn = await document(client, alice, "doc_amzn")
    assert amzn["merchant"] == "Amazon"
    found = result(
        await call(client, alice, "documents.search", {"query": "amazon", "useSearch": True})
    )
    assert [d["id"] for d in found["documents"]] == ["doc_amzn"]  # search terms follow


async def test_a_missing_capability_is_recorded_never_raised(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [aws_invoice("doc_aws", "AWS EMEA SARL")]
    )
    rule = await save(client, alice, SEND_AWS)
    approval = await save(client, alice, "Require approval for invoices over 100 EUR")
    said = await run_document_rules(
        services(store, without_integrations()), alice.org_id, "doc_aws", PROCESSED
    )
    assert said == [
        f"Rule '{rule['name']}': send-to-integration failed: this service has no "
        "integrations.send capability.",
        f"Rule '{approval['name']}': require-approval failed: this service has no "
        "rules.resume capability.",
    ]
    stats = await rule_stats(client, alice, rule["id"])
    assert (stats["documentsMatched"], stats["actionsApplied"], stats["actionsFailed"]) == (1, 0, 1)
    assert stats["lastError"] == (
        "send-to-integration: this service has no integrations.send capability"
    )
    assert stats["lastErrorAt"]
    assert await store.db["approval_requests"].count_documents({}) == 0


async def test_send_and_approval_go_through_the_registry_as_the_author(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [aws_invoice("doc_aws"), aws_invoice("doc_dupe")]
    )
    rule = await save(client, alice, SEND_AWS)
    await save(client, alice, "Invoices over 1000 EUR need approval")  # does not match
    stand_in = services(store, with_stand_ins())
    said = await run_document_rules(stand_in, alice.org_id, "doc_aws", PROCESSED)
    assert said == [f"Rule '{rule['name']}': sent to xero."]
    sends = [c for c in Calls.made if c[0] == "integrations.send"]
    assert sends == [
        (
            "integrations.send",
            alice.org_id,
            alice.user_id,
            {
                "documentId": "doc_aws",
                "integrationId": "int_xero",
                "tenantId": "tenant-1",
                "dryRun": False,
            },
        )
    ]

    # Gated (spec/decisions.md): the send waits for approval, and the rule says so.
    Calls.gated = True
    said = await run_document_rules(stand_in, alice.org_id, "doc_dupe", PROCESSED)
    assert said == [f"Rule '{rule['name']}': sending to xero awaits approval apr_1."]

    # A likely duplicate is not sent.
    Calls.made.clear()
    dup = RuleEvent(trigger="document-processed", key="processed", duplicate_of="doc_aws")
    await store.db["rule_applications"].delete_many({"documentId": "doc_dupe"})
    said = await run_document_rules(stand_in, alice.org_id, "doc_dupe", dup)
    assert said == [f"Rule '{rule['name']}': not sent to xero: possible duplicate of doc_aws."]
    assert Calls.made == []

    # require-approval stores an approval request as the rule's author (test_require_approval).
    big = await save(client, alice, "Require approval for invoices from Amazon Web Services")
    await run_document_rules(
        stand_in, alice.org_id, "doc_aws", RuleEvent(trigger="document-processed", key="again")
    )
    stored = await store.db["approval_requests"].find_one({"input.ruleId": big["id"]})
    assert stored is not None and stored["capabilitySlug"] == "rules.resume"
    assert stored["requester"]["userId"] == alice.user_id
    assert stored["requester"]["keyId"] == f"rule:{big['id']}"
    assert stored["input"]["documentId"] == "doc_aws" and stored["status"] == "pending"


async def test_a_rule_acts_only_while_its_author_is_a_member(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [aws_invoice("doc_x", amount=Decimal("500"))]
    )
    rule = await save(client, alice, "Send invoices over 100 EUR to Xero")
    await store.db["memberships"].delete_many({"userId": alice.user_id})
    assert await store.workspaces.role_of(alice.user_id, alice.org_id) is None
    said = await run_document_rules(
        services(store, with_stand_ins()), alice.org_id, "doc_x", PROCESSED
    )
    assert said == [
        f"Rule '{rule['name']}': send-to-integration failed: the rule's author "
        "is no longer a member of this workspace."
    ]
    assert [c for c in Calls.made if c[0] == "integrations.send"] == []


async def test_with_the_real_integrations_an_unconnected_xero_is_the_reason(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [aws_invoice("doc_aws")])
    rule = await save(client, alice, SEND_AWS)
    said = await run_document_rules(services(store), alice.org_id, "doc_aws", PROCESSED)
    assert len(said) == 1 and said[0].startswith(
        f"Rule '{rule['name']}': send-to-integration failed: xero is not connected in this "
        "workspace (status "
    )
    stats = await rule_stats(client, alice, rule["id"])
    assert stats["actionsFailed"] == 1 and "xero is not connected" in stats["lastError"]


async def test_a_rule_tags_documents_and_a_missing_tag_is_refused_or_reported(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id,
        [doc("doc_uber", merchant="UBER *TRIP"), doc("doc_shell", merchant="Shell")],
    )
    sentence = {"naturalLanguageRule": "Tag all Uber receipts as travel", "confirm": True}
    # The tag must exist when the rule is saved (a typo would otherwise tag nothing, silently).
    refused = await call(client, alice, "rules.execute", sentence)
    assert refused.status_code == 400
    assert "'travel' is not a tag of this workspace" in refused.text
    await call(client, alice, "tags.create", {"name": "Travel"})
    rule = await save(client, alice, sentence["naturalLanguageRule"])
    # Stored as the workspace spells the tag.
    tagging = next(a for a in rule["definition"]["actions"] if a.get("type") == "add-tag")
    assert tagging["tag"] == "Travel"
    running = services(store)
    said = await run_document_rules(running, alice.org_id, "doc_uber", PROCESSED)
    assert said == [f"Rule '{rule['name']}': tagged Travel."]
    assert await run_document_rules(running, alice.org_id, "doc_shell", PROCESSED) == []
    uber = await document(client, alice, "doc_uber")
    assert uber["tags"] == ["Travel"]
    assert ("tags", [], ["Travel"], "rule") in [
        (e["field"], e["oldValue"] or [], e["newValue"], e["via"]) for e in uber["editHistory"]
    ]
    # The tag deleted later: the rule's run says so instead of failing the pipeline.
    tag_id = result(await call(client, alice, "tags.list", {}))["tags"][0]["id"]
    await call(client, alice, "tags.delete", {"id": tag_id})
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_uber2", merchant="Uber BV")])
    await run_document_rules(running, alice.org_id, "doc_uber2", PROCESSED)
    stats = await rule_stats(client, alice, rule["id"])
    assert stats["actionsFailed"] == 1 and "no longer exists" in stats["lastError"]
