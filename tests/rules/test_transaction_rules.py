"""Rules about bank transactions (issue 42, item 3: "transactions from Shell are Fuel"): read
as a transaction-matched rule whose conditions are about the transaction, fired in a job when
a match is made (matches.confirm, an import's automatic matches), acting on the matched
documents. Through the REST face of the ASGI app on the in-memory store, and once on the real
protocol."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

import httpx
import pytest

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from engines.rules.parser import merchant_pattern, read_rule
from persistence.store import Store
from persistence.transactions import FIELDS as TRANSACTION_FIELDS
from persistence.where import compile_where
from resolvers import build_job_kinds, build_registry
from resolvers.framework.registry import Registry
from resolvers.services.rules.rule_runner import queue_match_rules, run_transaction_rules
from schema.rules import RuleDefinition
from tests.conftest import Tenant, asgi_client
from tests.documents.conftest import call, doc, result
from tests.rules.conftest import ungated_tenant
from tests.rules.test_firing import document, rule_stats, save
from tests.statements.helpers import import_bytes
from tests.statements.test_auto_match import FIRST, by_text

SHELL_IS_FUEL = "Transactions from Shell are Fuel"
# The receipts FIRST's lines pay (Pret and Shell are matched at import), none yet Fuel.
RECEIPTS = [
    doc("doc_pret", merchant="Pret A Manger", amount=Decimal("6.45"), currency="GBP",
        docDate=date(2026, 11, 27), category="Meals"),
    doc("doc_gas1", merchant="British Gas", amount=Decimal("84.20"), currency="GBP",
        docDate=date(2026, 11, 10), category="Utilities"),
    doc("doc_shell", merchant="Shell", amount=Decimal("61.20"), currency="GBP",
        docDate=date(2026, 11, 20), category="Other"),
]  # fmt: skip
TRANSACTION_MATCHED = {"type": "transaction-matched"}


def pool(store: Store, registry: Registry | None = None) -> WorkerPool:
    services = build_services(Settings(), store, registry=registry or build_registry())
    return WorkerPool(services, build_job_kinds())


async def queued(store: Store, kind: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = (
        await store.db["jobs"].find({"kind": kind, "status": "queued"}).to_list(None)
    )
    return found


def conditions(rule: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The rule's conditions; a payee's group (counterparty or booking text) as ("payee", names)."""
    where = rule["conditions"] or {"conditions": []}
    found = []
    for c in where["conditions"]:
        if "logic" in c:
            assert c["logic"] == "or", c
            [pattern] = {inner["value"] for inner in c["conditions"]}
            assert [inner["field"] for inner in c["conditions"]] == ["counterparty", "reference"]
            found.append(("payee", "regex", pattern))
        else:
            found.append((c["field"], c["op"], c["value"]))
    return sorted(found)


READINGS = [
    (
        SHELL_IS_FUEL,
        [("payee", "regex", merchant_pattern(["Shell"]))],
        [{"type": "set-category", "category": "Fuel"}],
    ),
    (
        "Card payments to Uber are Travel",
        [("payee", "regex", merchant_pattern(["Uber"]))],
        [{"type": "set-category", "category": "Travel"}],
    ),
    (
        "Tag transactions from AWS as cloud",
        [("payee", "regex", merchant_pattern(["AWS"]))],
        [{"type": "add-tag", "tag": "cloud"}],
    ),
    (
        # Debits are negative: "over 500 EUR" is money paid, never a credit.
        "Categorize bank transactions over 500 EUR as Equipment",
        [("amount", "lt", -500.0), ("amount", "lt", 0), ("currency", "eq", "EUR")],
        [{"type": "set-category", "category": "Equipment"}],
    ),
    (
        "Mark debits to Netflix as monthly recurring",
        [("payee", "regex", merchant_pattern(["Netflix"]))],
        [{"type": "mark-recurring", "recurringType": "monthly"}],
    ),
]


@pytest.mark.parametrize(("sentence", "where", "actions"), READINGS)
def test_a_sentence_about_transactions_is_a_transaction_matched_rule(
    sentence: str, where: list[tuple[str, str, Any]], actions: list[dict[str, Any]]
) -> None:
    draft = read_rule(sentence)
    assert draft.rule is not None, draft
    assert draft.not_understood == [] and draft.rule["trigger"] == TRANSACTION_MATCHED
    assert conditions(draft.rule) == sorted(where)
    assert draft.rule["actions"] == actions
    # The transactions' own where compiler reads the conditions.
    rule = RuleDefinition.model_validate(draft.rule)
    compile_where(rule.conditions, dict(TRANSACTION_FIELDS), "conditions")


def test_actions_that_do_not_fit_a_matched_document_are_refused_aloud() -> None:
    draft = read_rule("Archive payments from Shell and categorize them as Fuel")
    assert draft.rule is not None
    assert draft.rule["actions"] == [{"type": "set-category", "category": "Fuel"}]
    assert any("left out: archive" in warning for warning in draft.warnings), draft.warnings
    alone = read_rule("Bank transactions over 500 EUR need approval")
    assert alone.rule is None
    assert any("require-approval" in warning for warning in alone.warnings), alone.warnings
    # A document condition means nothing for a transaction: named, not silently kept.
    unpaid = read_rule("Unpaid transactions from Shell are Fuel")
    assert unpaid.rule is not None and conditions(unpaid.rule) == [
        ("payee", "regex", merchant_pattern(["Shell"]))
    ]
    assert any("paymentStatus" in warning for warning in unpaid.warnings), unpaid.warnings
    # The model refuses such a rule however it was written (a language model's answer).
    with pytest.raises(ValueError, match="does not archive"):
        RuleDefinition.model_validate(
            {"name": "x", "trigger": TRANSACTION_MATCHED, "actions": [{"type": "archive"}]}
        )


def test_the_copula_reads_a_category_for_documents_too() -> None:
    draft = read_rule("Receipts from Uber are Travel")
    assert draft.rule is not None and draft.rule["trigger"] == {"type": "document-processed"}
    assert draft.rule["actions"] == [{"type": "set-category", "category": "Travel"}]
    assert conditions(draft.rule) == [
        ("docType", "eq", "receipt"),
        ("merchant", "regex", merchant_pattern(["Uber"])),
    ]


async def test_prepare_counts_the_matching_transactions(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await call(client, alice, "matches.configure", {"autoMatch": False})
    result(await import_bytes(client, alice, FIRST, "s.csv", currency="GBP"))
    preview = result(
        await call(client, alice, "rules.prepare", {"naturalLanguageRule": SHELL_IS_FUEL})
    )
    assert preview["rule"]["trigger"]["type"] == "transaction-matched"
    assert (preview["matchingTransactions"], preview["matchingDocuments"]) == (1, None)
    document_rule = result(
        await call(
            client, alice, "rules.prepare", {"naturalLanguageRule": "Receipts from Shell are Fuel"}
        )
    )
    assert (document_rule["matchingTransactions"], document_rule["matchingDocuments"]) == (None, 0)
    saved = await save(client, alice, SHELL_IS_FUEL)
    assert saved["triggerType"] == "transaction-matched"
    # A sentence whose only action cannot act on matched documents saves nothing.
    refused = await call(
        client,
        alice,
        "rules.execute",
        {"naturalLanguageRule": "Archive payments from Shell", "confirm": True},
    )
    assert refused.status_code == 400 and "naturalLanguageRule" in refused.text


async def test_a_confirmed_match_runs_the_rule_on_the_receipt_in_a_job(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(alice.org_id, RECEIPTS)
    await call(client, alice, "matches.configure", {"autoMatch": False})
    result(await import_bytes(client, alice, FIRST, "s.csv", currency="GBP"))
    txns = await by_text(client, alice)
    shell, pret = txns["SHELL 2026-11-20"], txns["PRET A MANGER LONDON 2026-11-28"]

    # Without a transaction-matched rule a match queues nothing.
    confirm = {"transactionId": pret["id"], "documentIds": ["doc_pret"]}
    result(await call(client, alice, "matches.confirm", confirm))
    assert await queued(store, "run-match-rules") == []
    result(await call(client, alice, "matches.undo", {"transactionId": pret["id"]}))

    rule = await save(client, alice, SHELL_IS_FUEL)
    # Pret first, then Shell: the Shell receipt's change (the later job) is the sentinel that
    # the Pret match was evaluated and left alone.
    result(await call(client, alice, "matches.confirm", {**confirm, "documentIds": ["doc_pret"]}))
    confirm_shell = {"transactionId": shell["id"], "documentIds": ["doc_shell"]}
    result(await call(client, alice, "matches.confirm", confirm_shell))
    assert (await document(client, alice, "doc_shell"))["category"] == "Other"  # not inline
    assert len(await queued(store, "run-match-rules")) == 2

    assert await pool(store).run_until_idle() == 2
    receipt = await document(client, alice, "doc_shell")
    assert receipt["category"] == "Fuel"
    assert [(e["field"], e["via"], e["editedBy"]) for e in receipt["editHistory"]] == [
        ("category", "rule", rule["id"])
    ]
    assert (await document(client, alice, "doc_pret"))["category"] == "Meals"
    stats = await rule_stats(client, alice, rule["id"])
    assert (stats["runs"], stats["documentsMatched"], stats["actionsApplied"]) == (2, 1, 1)
    assert stats["lastRunAt"] is not None and stats["lastError"] is None

    # Undoing the match does not undo what the rule did.
    result(await call(client, alice, "matches.undo", {"transactionId": shell["id"]}))
    assert (await document(client, alice, "doc_shell"))["category"] == "Fuel"
    assert await queued(store, "run-match-rules") == []


async def test_an_automatic_match_at_import_runs_the_rule(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    await store.documents.writes.insert_many(alice.org_id, RECEIPTS)
    rule = await save(client, alice, SHELL_IS_FUEL)
    answer = result(await import_bytes(client, alice, FIRST, "s.csv", currency="GBP"))
    assert answer["autoMatched"] == 3  # Pret, British Gas and Shell
    [job] = await queued(store, "run-match-rules")
    assert len(job["payload"]["transactionIds"]) == 3  # one job for the import
    assert (await document(client, alice, "doc_shell"))["category"] == "Other"  # not inline

    assert await pool(store).run_until_idle() == 1
    assert (await document(client, alice, "doc_shell"))["category"] == "Fuel"
    assert (await document(client, alice, "doc_pret"))["category"] == "Meals"
    assert (await document(client, alice, "doc_gas1"))["category"] == "Utilities"
    # The three transactions were evaluated (the sentinel that the others were seen), one
    # matched.
    stats = await rule_stats(client, alice, rule["id"])
    assert (stats["runs"], stats["documentsMatched"], stats["actionsApplied"]) == (3, 1, 1)
    # A retried job acts on nothing twice.
    await run_transaction_rules(
        build_services(Settings(), store, registry=build_registry()),
        alice.org_id,
        job["payload"]["transactionIds"],
    )
    stats = await rule_stats(client, alice, rule["id"])
    assert (stats["documentsMatched"], stats["actionsApplied"]) == (1, 1)


async def test_another_workspaces_rule_does_not_fire(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant, store: Store
) -> None:
    bob_rule = await save(client, bob, SHELL_IS_FUEL)
    await store.documents.writes.insert_many(alice.org_id, RECEIPTS)
    result(await import_bytes(client, alice, FIRST, "s.csv", currency="GBP"))
    assert await queued(store, "run-match-rules") == []
    assert (await rule_stats(client, bob, bob_rule["id"]))["runs"] == 0


@pytest.mark.wire
async def test_a_confirmed_match_runs_the_rule_on_the_wire(
    wire_store: Store, registry: Registry
) -> None:
    """The job's reads ($facet over the transaction filters) on the real protocol."""
    alice = await ungated_tenant(wire_store, "alice@example.com", "Alice Co")
    await wire_store.documents.writes.insert_many(alice.org_id, RECEIPTS)
    async with asgi_client(wire_store, registry) as http:
        await call(http, alice, "matches.configure", {"autoMatch": False})
        result(await import_bytes(http, alice, FIRST, "s.csv", currency="GBP"))
        rule = await save(http, alice, SHELL_IS_FUEL)
        txns = await by_text(http, alice)
        for text, doc_id in (
            ("PRET A MANGER LONDON 2026-11-28", "doc_pret"),
            ("SHELL 2026-11-20", "doc_shell"),
        ):
            body = {"transactionId": txns[text]["id"], "documentIds": [doc_id]}
            result(await call(http, alice, "matches.confirm", body))
        assert await pool(wire_store, registry).run_until_idle() == 2
        assert (await document(http, alice, "doc_shell"))["category"] == "Fuel"
        assert (await document(http, alice, "doc_pret"))["category"] == "Meals"
        stats = await rule_stats(http, alice, rule["id"])
        assert (stats["runs"], stats["documentsMatched"], stats["actionsApplied"]) == (2, 1, 1)


async def test_an_import_s_matches_are_queued_in_jobs_of_500(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    """Each job stays well within a job's time limit, other workspaces' jobs in between."""
    services = build_services(Settings(), store, registry=build_registry())
    ids = [f"txn_{i}" for i in range(1_100)]
    await queue_match_rules(services, alice.org_id, ids)
    assert await queued(store, "run-match-rules") == []  # no rule: nothing queued
    await save(client, alice, SHELL_IS_FUEL)
    await queue_match_rules(services, alice.org_id, ids)
    jobs = await queued(store, "run-match-rules")
    assert sorted(len(job["payload"]["transactionIds"]) for job in jobs) == [100, 500, 500]
    assert sorted(i for job in jobs for i in job["payload"]["transactionIds"]) == sorted(ids)
