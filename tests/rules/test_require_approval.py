"""require-approval: the actions after it wait for an owner or admin. The rule stores one
approval request (rules.resume for that rule and document); approving runs the held actions
once, as the rule's author; rejecting applies nothing. REST and GraphQL, tenant isolation."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from app.host.config import Settings
from app.host.services import build_services
from persistence.store import Store
from resolvers import RESOURCES
from resolvers.framework.context import Credentials
from resolvers.framework.errors import Forbidden
from resolvers.framework.invoke import authorize, run
from resolvers.framework.registry import Registry
from resolvers.resources import integrations
from resolvers.services.rules.rule_runner import run_document_rules
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result
from tests.rules import gated_stand_ins
from tests.rules.stand_ins import Calls
from tests.rules.test_firing import PROCESSED, document, rule_stats, save, services

SEND_AFTER_REVIEW = "Categorize Uber receipts as Travel, require approval and send them to Xero"
ARCHIVE_AFTER_REVIEW = "Require approval and archive receipts under 1 dollar"
REVIEW_ONLY = "Require approval for invoices over 100 EUR"


@pytest.fixture(scope="module")
def registry() -> Registry:
    """The service with integrations.send behind its real approval gate (a stand-in handler:
    no accounting connection needed). One for the module: a frozen registry keeps the GraphQL
    schema its apps derive, so they build it once."""
    modules = [m for m in RESOURCES if m is not integrations]
    return Registry.from_modules([*modules, gated_stand_ins]).freeze()


@pytest.fixture(autouse=True)
def fresh_calls() -> Iterator[None]:
    Calls.made.clear()
    yield
    Calls.made.clear()


async def arrive(store: Store, tenant: Tenant, doc_id: str, **fields: Any) -> str:
    """A document as an upload leaves it: with the activity item that brought it in."""
    activity = await store.activity.create(tenant.org_id, "upload", [doc_id], {})
    await store.activity.set_status(tenant.org_id, activity["_id"], "processed", "Extracted.")
    await store.documents.writes.insert_many(
        tenant.org_id, [doc(doc_id, activityId=activity["_id"], **fields)]
    )
    activity_id: str = activity["_id"]
    return activity_id


async def fire(store: Store, registry: Registry, tenant: Tenant, doc_id: str) -> list[str]:
    return await run_document_rules(services(store, registry), tenant.org_id, doc_id, PROCESSED)


async def reasoning(store: Store, tenant: Tenant, activity_id: str) -> str:
    item = await store.activity.get(tenant.org_id, activity_id)
    assert item is not None
    text: str = item["reasoning"]
    return text


def waiting_id(line: str) -> str:
    """The approval request id in "... waiting for approval apr_… ..."."""
    return line.split("waiting for approval ", 1)[1].split(" ")[0].rstrip(".")


async def held_archive(
    client: httpx.AsyncClient, store: Store, registry: Registry, tenant: Tenant
) -> tuple[dict[str, Any], str, str]:
    """A 0.50 USD receipt that "Require approval and archive receipts under 1 dollar" matched:
    the rule, its approval request's id and the document's activity id."""
    activity_id = await arrive(
        store, tenant, "doc_tiny", merchant="Kiosk", amount=Decimal("0.50"), currency="USD"
    )
    rule = await save(client, tenant, ARCHIVE_AFTER_REVIEW)
    [line] = await fire(store, registry, tenant, "doc_tiny")
    request_id = waiting_id(line)
    assert line == f"Rule '{rule['name']}': waiting for approval {request_id} to archive it."
    return rule, request_id, activity_id


def sends() -> list[tuple[Any, ...]]:
    return [c for c in Calls.made if c[0] == "integrations.send"]


async def gql(client: httpx.AsyncClient, tenant: Tenant, query: str, **variables: Any) -> Any:
    response = await client.post(
        "/v1/graphql", json={"query": query, "variables": variables}, headers=tenant.headers()
    )
    return response.json()


GQL_APPROVE = """mutation($id: String!) { approvalsApprove(input: {approvalRequestId: $id}) {
  status capabilitySlug result } }"""
GQL_REJECT = """mutation($id: String!, $m: String) {
  approvalsReject(input: {approvalRequestId: $id, message: $m}) { status rejectionMessage } }"""
GQL_RULES = """query { rulesList(input: {includeDisabled: true}) { rules { id stats {
  awaitingApproval actionsApplied } } } }"""


async def test_held_actions_wait_then_run_once_as_the_author_when_approved(
    client: httpx.AsyncClient, alice: Tenant, store: Store, registry: Registry
) -> None:
    activity_id = await arrive(
        store, alice, "doc_ride", merchant="UBER BV", category="Other", amount=Decimal("23.40")
    )
    rule = await save(client, alice, SEND_AFTER_REVIEW)
    [line] = await fire(store, registry, alice, "doc_ride")
    request_id = waiting_id(line)
    assert line == (
        f"Rule '{rule['name']}': set category to Travel; waiting for approval {request_id} "
        "to send it to xero."
    )
    # The action before require-approval ran at once; the one after it did not run at all.
    assert (await document(client, alice, "doc_ride"))["category"] == "Travel"
    assert sends() == []
    stats = await rule_stats(client, alice, rule["id"])
    assert stats["awaitingApproval"] == [request_id] and stats["actionsApplied"] == 2

    shown = result(await call(client, alice, "approvals.get", {"approvalRequestId": request_id}))
    assert (shown["status"], shown["capabilitySlug"], shown["requestedBy"]) == (
        "pending",
        "rules.resume",
        alice.user_id,
    )
    assert "doc_ride" in shown["description"] and "send it to xero" in shown["description"]
    assert shown["input"]["ruleId"] == rule["id"] and shown["input"]["documentId"] == "doc_ride"

    # Internal: no face offers rules.resume, so a direct call finds no such capability.
    direct = await call(client, alice, "rules.resume", shown["input"])
    assert direct.status_code == 404 and sends() == []

    approved = result(
        await call(client, alice, "approvals.approve", {"approvalRequestId": request_id})
    )
    assert approved["status"] == "executed" and approved["capabilitySlug"] == "rules.resume"
    assert approved["result"]["actionsApplied"] == 1 and approved["result"]["actionsFailed"] == 0
    # Approved once: integrations.send's own gate does not ask a second time.
    assert "sent to xero" in approved["result"]["outcome"]
    assert sends() == [
        (
            "integrations.send",
            alice.org_id,
            alice.user_id,  # as the rule's author
            {
                "documentId": "doc_ride",
                "integrationId": "int_xero",
                "tenantId": "tenant-1",
                "dryRun": False,
            },
        )
    ]
    assert (
        f"Rule '{rule['name']}': approval {request_id} granted by alice@example.com: "
        "sent to xero." in await reasoning(store, alice, activity_id)
    )

    again = await call(client, alice, "approvals.approve", {"approvalRequestId": request_id})
    assert again.status_code == 400 and "already executed" in again.text
    assert len(sends()) == 1
    stats = await rule_stats(client, alice, rule["id"])
    assert stats["awaitingApproval"] == [] and stats["actionsApplied"] == 3
    assert stats["runs"] == 1 and stats["documentsMatched"] == 1  # the approval is no new run


async def test_a_rejected_request_applies_nothing_over_graphql(
    client: httpx.AsyncClient, alice: Tenant, store: Store, registry: Registry
) -> None:
    rule, request_id, activity_id = await held_archive(client, store, registry, alice)
    listed = (await gql(client, alice, GQL_RULES))["data"]["rulesList"]["rules"]
    assert listed == [
        {"id": rule["id"], "stats": {"awaitingApproval": [request_id], "actionsApplied": 1}}
    ]

    rejected = (await gql(client, alice, GQL_REJECT, id=request_id, m="keep it"))["data"]
    assert rejected["approvalsReject"] == {"status": "rejected", "rejectionMessage": "keep it"}
    tiny = await document(client, alice, "doc_tiny")
    assert tiny["archived"] is False and tiny["editHistory"] == []
    assert (
        f"Rule '{rule['name']}': approval {request_id} rejected by alice@example.com (keep it); "
        "nothing was applied." in await reasoning(store, alice, activity_id)
    )
    late = await gql(client, alice, GQL_APPROVE, id=request_id)
    assert late["data"]["approvalsApprove"] is None and "already rejected" in str(late["errors"])
    assert (await document(client, alice, "doc_tiny"))["archived"] is False
    listed = (await gql(client, alice, GQL_RULES))["data"]["rulesList"]["rules"]
    assert listed[0]["stats"] == {"awaitingApproval": [], "actionsApplied": 1}


async def test_approving_a_review_only_rule_records_the_review_over_graphql(
    client: httpx.AsyncClient, alice: Tenant, store: Store, registry: Registry
) -> None:
    activity_id = await arrive(
        store,
        alice,
        "doc_big",
        merchant="Hetzner",
        docType="invoice",
        amount=Decimal("250.00"),
        currency="EUR",
    )
    rule = await save(client, alice, REVIEW_ONLY)
    [line] = await fire(store, registry, alice, "doc_big")
    request_id = waiting_id(line)
    assert line == f"Rule '{rule['name']}': waiting for approval {request_id}."
    body = await gql(client, alice, GQL_APPROVE, id=request_id)
    approved = body["data"]["approvalsApprove"]
    assert approved["status"] == "executed" and approved["capabilitySlug"] == "rules.resume"
    assert approved["result"]["actionsApplied"] == 0
    assert (
        f"Rule '{rule['name']}': approval {request_id} granted by alice@example.com: "
        "reviewed, nothing more to do." in await reasoning(store, alice, activity_id)
    )
    assert (await document(client, alice, "doc_big"))["editHistory"] == []


async def test_another_workspace_can_neither_see_nor_approve_nor_run_it(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant, store: Store, registry: Registry
) -> None:
    _, request_id, _ = await held_archive(client, store, registry, alice)
    stored = result(await call(client, alice, "approvals.get", {"approvalRequestId": request_id}))

    for slug in ("approvals.get", "approvals.approve", "approvals.reject"):
        refused = await call(client, bob, slug, {"approvalRequestId": request_id})
        assert refused.status_code == 404, (slug, refused.text)
    assert (await call(client, bob, "rules.resume", stored["input"])).status_code == 404
    body = await gql(client, bob, GQL_APPROVE, id=request_id)
    assert body["data"]["approvalsApprove"] is None and "not found" in str(body["errors"])
    assert (await document(client, alice, "doc_tiny"))["archived"] is False

    assert result(await call(client, alice, "approvals.approve", {"approvalRequestId": request_id}))
    assert (await document(client, alice, "doc_tiny"))["archived"] is True


async def test_concurrent_approvals_apply_the_held_action_once(
    client: httpx.AsyncClient, alice: Tenant, store: Store, registry: Registry
) -> None:
    rule, request_id, _ = await held_archive(client, store, registry, alice)
    answers = await asyncio.gather(
        *(
            call(client, alice, "approvals.approve", {"approvalRequestId": request_id})
            for _ in range(4)
        )
    )
    assert sorted(a.status_code for a in answers) == [200, 400, 400, 400]
    tiny = await document(client, alice, "doc_tiny")
    assert tiny["archived"] is True
    assert [(e["field"], e["editedBy"]) for e in tiny["editHistory"]] == [("archived", rule["id"])]
    assert (await rule_stats(client, alice, rule["id"]))["actionsApplied"] == 2


async def test_deleting_the_rule_rejects_its_open_requests(
    client: httpx.AsyncClient, alice: Tenant, store: Store, registry: Registry
) -> None:
    rule, request_id, activity_id = await held_archive(client, store, registry, alice)
    assert result(await call(client, alice, "rules.delete", {"id": rule["id"]}))["deleted"]
    shown = result(await call(client, alice, "approvals.get", {"approvalRequestId": request_id}))
    assert shown["status"] == "rejected" and shown["rejectionMessage"] == "The rule was deleted"
    assert (await document(client, alice, "doc_tiny"))["archived"] is False
    assert f"approval {request_id} rejected by alice@example.com" in await reasoning(
        store, alice, activity_id
    )


async def test_no_request_is_stored_when_the_author_left_and_nothing_after_it_runs(
    client: httpx.AsyncClient, alice: Tenant, store: Store, registry: Registry
) -> None:
    await arrive(store, alice, "doc_tiny", merchant="Kiosk", amount=Decimal("0.5"), currency="USD")
    rule = await save(client, alice, ARCHIVE_AFTER_REVIEW)
    await store.db["memberships"].delete_many({"userId": alice.user_id})
    said = await fire(store, registry, alice, "doc_tiny")
    assert said == [
        f"Rule '{rule['name']}': require-approval failed: the rule's author is no longer a "
        "member of this workspace; the actions after it were not applied."
    ]
    assert await store.db["approval_requests"].count_documents({}) == 0
    archived = await store.documents.reads.get(alice.org_id, "doc_tiny")
    assert archived is not None and not archived.get("archived")


async def test_without_require_approval_the_send_meets_its_own_gate(
    client: httpx.AsyncClient, alice: Tenant, store: Store, registry: Registry
) -> None:
    """The control of the first test: the gate in this registry is real."""
    await arrive(store, alice, "doc_ride", merchant="UBER BV", amount=Decimal("23.40"))
    rule = await save(client, alice, "Send Uber receipts to Xero")
    [line] = await fire(store, registry, alice, "doc_ride")
    assert line.startswith(f"Rule '{rule['name']}': sending to xero awaits approval apr_")
    assert [c[3]["dryRun"] for c in sends()] == [True]  # the gate's preview only


async def test_resume_refuses_any_run_but_the_approval_of_its_request(
    client: httpx.AsyncClient, alice: Tenant, store: Store, registry: Registry
) -> None:
    """Behind the faces, server code that ran the internal capability with the stored input
    but not as the approval running it (here the workspace owner's own key) is refused."""
    _, request_id, _ = await held_archive(client, store, registry, alice)
    stored = result(await call(client, alice, "approvals.get", {"approvalRequestId": request_id}))
    spec = registry.get("rules.resume")
    assert spec is not None and spec.internal and spec not in list(registry)
    owner = await authorize(
        Credentials(api_key=alice.api_key, org_id=alice.org_id),
        build_services(Settings(), store),
        spec.permissions,
        needs_workspace=True,
    )
    with pytest.raises(Forbidden):
        await run(spec, owner, stored["input"], approved=True)
    assert (await document(client, alice, "doc_tiny"))["archived"] is False
