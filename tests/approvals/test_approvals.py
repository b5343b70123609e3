"""Approvals through REST and GraphQL: every path of a gated call (documents.bulk-edit here;
integrations.send and unlink have theirs in tests/integrations)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from app.mcp.server import approval_result
from persistence.store import Store
from tests.conftest import Tenant, make_tenant
from tests.documents.conftest import KNOWN, call, doc, result

EDIT = {"merchant": "starbucks", "changes": {"category": "Coffee"}, "dryRun": False}


@pytest.fixture
async def seeded(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, KNOWN)
    return alice


@pytest.fixture
async def member(store: Store, seeded: Tenant) -> Tenant:
    """Carol: a plain member of Alice's workspace (she may request, not approve)."""
    carol = await make_tenant(store, "carol@example.com", "Carol's own")
    await store.workspaces.add_member(seeded.org_id, carol.user_id, "member")
    return Tenant(carol.user_id, seeded.org_id, carol.api_key)


async def category_of(client: httpx.AsyncClient, tenant: Tenant, doc_id: str) -> str:
    found = result(await call(client, tenant, "documents.get", {"id": doc_id}))
    return str(found["document"]["category"])


def message(response: httpx.Response) -> str:
    return str(response.json()["error"]["errorMessage"])


async def test_request_then_approve_runs_once_as_the_requester(
    client: httpx.AsyncClient, seeded: Tenant, member: Tenant
) -> None:
    waiting = result(await call(client, member, "documents.bulk-edit", EDIT))
    assert set(waiting) == {"status", "approvalRequestId", "capability", "title", "description"}
    assert waiting["status"] == "approval_required"
    assert waiting["title"] == "Bulk-edit documents"
    assert "category to 'Coffee'" in waiting["description"]
    assert await category_of(client, seeded, "doc_a") == "Meals"
    request_id = waiting["approvalRequestId"]

    shown = result(await call(client, seeded, "approvals.get", {"approvalRequestId": request_id}))
    assert shown["status"] == "pending" and shown["capabilitySlug"] == "documents.bulk-edit"
    assert shown["requestedBy"] == member.user_id
    assert shown["input"] == {
        "merchant": "starbucks",
        "changes": {"category": "Coffee"},
        "dryRun": False,
    }

    refused = await call(client, member, "approvals.approve", {"approvalRequestId": request_id})
    assert refused.status_code == 403 and "owners and admins" in message(refused)

    approved = result(
        await call(client, seeded, "approvals.approve", {"approvalRequestId": request_id})
    )
    assert approved["status"] == "executed"
    assert approved["capabilitySlug"] == "documents.bulk-edit"
    assert approved["result"]["modified"] == 2
    document = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert document["category"] == "Coffee"
    # It ran as Carol, who asked for it.
    assert [entry["editedBy"] for entry in document["editHistory"]] == [member.user_id]

    after = result(await call(client, member, "approvals.get", {"approvalRequestId": request_id}))
    assert after["status"] == "executed" and after["resolvedBy"] == seeded.user_id
    assert after["result"]["modified"] == 2
    again = await call(client, seeded, "approvals.approve", {"approvalRequestId": request_id})
    assert again.status_code == 400 and "already executed" in message(again)


async def test_reject_with_message_and_its_bounds(
    client: httpx.AsyncClient, seeded: Tenant, member: Tenant
) -> None:
    request_id = result(await call(client, member, "documents.bulk-edit", EDIT))[
        "approvalRequestId"
    ]
    too_long = await call(
        client, seeded, "approvals.reject", {"approvalRequestId": request_id, "message": "x" * 501}
    )
    assert too_long.status_code == 400 and "message" in message(too_long)
    empty = await call(
        client, seeded, "approvals.reject", {"approvalRequestId": request_id, "message": ""}
    )
    assert empty.status_code == 400

    rejected = result(
        await call(
            client,
            seeded,
            "approvals.reject",
            {"approvalRequestId": request_id, "message": "Meals stay meals"},
        )
    )
    assert rejected == {
        "approvalRequestId": request_id,
        "status": "rejected",
        "capabilitySlug": "documents.bulk-edit",
        "rejectionMessage": "Meals stay meals",
    }
    late = await call(client, seeded, "approvals.approve", {"approvalRequestId": request_id})
    assert late.status_code == 400 and "already rejected" in message(late)
    assert await category_of(client, seeded, "doc_a") == "Meals"
    shown = result(await call(client, member, "approvals.get", {"approvalRequestId": request_id}))
    assert shown["status"] == "rejected" and shown["rejectionMessage"] == "Meals stay meals"

    # The requester may withdraw their own request; another member may not reject it.
    mine = result(await call(client, member, "documents.bulk-edit", EDIT))["approvalRequestId"]
    withdrawn = result(await call(client, member, "approvals.reject", {"approvalRequestId": mine}))
    assert withdrawn["status"] == "rejected" and withdrawn["rejectionMessage"] is None


async def test_two_concurrent_approvals_run_the_call_once(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    admin = await make_tenant(store, "dave@example.com", "Dave's own")
    await store.workspaces.add_member(seeded.org_id, admin.user_id, "admin")
    dave = Tenant(admin.user_id, seeded.org_id, admin.api_key)
    for round_ in range(5):
        edit = {**EDIT, "changes": {"category": f"Coffee {round_}"}}
        request_id = result(await call(client, seeded, "documents.bulk-edit", edit))[
            "approvalRequestId"
        ]
        body = {"approvalRequestId": request_id}
        first, second = await asyncio.gather(
            call(client, seeded, "approvals.approve", body),
            call(client, dave, "approvals.approve", body),
        )
        statuses = sorted([first.status_code, second.status_code])
        assert statuses == [200, 400], (first.text, second.text)
        loser = first if first.status_code == 400 else second
        assert "being executed" in message(loser) or "already executed" in message(loser)
        document = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))
        # Exactly one edit per round: the call ran once.
        assert len(document["document"]["editHistory"]) == round_ + 1


async def test_gate_switched_off_per_workspace(
    client: httpx.AsyncClient, store: Store, seeded: Tenant, member: Tenant, bob: Tenant
) -> None:
    settings = result(await call(client, seeded, "approvals.settings", {}))
    assert {"slug": "documents.bulk-edit", "name": "documentsBulkEdit", "gated": True} in (
        settings["capabilities"]
    )
    forbidden = await call(
        client,
        member,
        "approvals.configure",
        {"capabilitySlug": "documents.bulk-edit", "gated": False},
    )
    assert forbidden.status_code == 403
    unknown = await call(
        client, seeded, "approvals.configure", {"capabilitySlug": "documents.get", "gated": False}
    )
    assert unknown.status_code == 400 and "capabilitySlug" in message(unknown)
    missing = await call(
        client, seeded, "approvals.configure", {"capabilitySlug": "nothing.here", "gated": False}
    )
    assert missing.status_code == 404
    malformed = await call(
        client, seeded, "approvals.configure", {"capabilitySlug": "no slug", "gated": False}
    )
    assert malformed.status_code == 400 and "capabilitySlug" in message(malformed)

    result(
        await call(
            client,
            seeded,
            "approvals.configure",
            {"capabilitySlug": "documents.bulk-edit", "gated": False},
        )
    )
    done = result(await call(client, member, "documents.bulk-edit", EDIT))
    assert done["modified"] == 2 and "status" not in done
    # Another workspace keeps its gate.
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob", merchant="Starbucks")])
    assert result(await call(client, bob, "documents.bulk-edit", EDIT))["status"] == (
        "approval_required"
    )

    result(
        await call(
            client,
            seeded,
            "approvals.configure",
            {"capabilitySlug": "documents.bulk-edit", "gated": True},
        )
    )
    again = result(await call(client, member, "documents.bulk-edit", EDIT))
    assert again["status"] == "approval_required"


async def test_bad_calls_are_refused_before_a_request_is_stored(
    client: httpx.AsyncClient, store: Store, seeded: Tenant, bob: Tenant
) -> None:
    await store.documents.writes.insert_many(
        seeded.org_id, [doc(f"doc_many{i}", merchant="Uber") for i in range(1001)]
    )
    too_many = await call(
        client,
        seeded,
        "documents.bulk-edit",
        {"merchant": "uber", "changes": {"category": "Transport"}, "dryRun": False},
    )
    assert too_many.status_code == 400 and "at most 1,000" in message(too_many)
    assert await store.db["approval_requests"].count_documents({}) == 0

    request_id = result(await call(client, seeded, "documents.bulk-edit", EDIT))[
        "approvalRequestId"
    ]
    for slug in ("approvals.get", "approvals.approve", "approvals.reject"):
        foreign = await call(client, bob, slug, {"approvalRequestId": request_id})
        assert foreign.status_code == 404, slug
        missing = await call(client, seeded, slug, {"approvalRequestId": "apr_nope"})
        assert missing.status_code == 404
        blank = await call(client, seeded, slug, {"approvalRequestId": ""})
        assert blank.status_code == 400 and "approvalRequestId" in message(blank)


async def test_the_approved_call_failing_leaves_the_request_pending(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    request_id = result(await call(client, seeded, "documents.bulk-edit", EDIT))[
        "approvalRequestId"
    ]
    # Between the request and the approval the selection grew past the limit.
    await store.documents.writes.insert_many(
        seeded.org_id, [doc(f"doc_sb{i}", merchant="Starbucks") for i in range(1000)]
    )
    failed = await call(client, seeded, "approvals.approve", {"approvalRequestId": request_id})
    assert failed.status_code == 400
    shown = result(await call(client, seeded, "approvals.get", {"approvalRequestId": request_id}))
    assert shown["status"] == "pending" and "at most 1,000" in shown["lastError"]
    assert (
        result(await call(client, seeded, "approvals.reject", {"approvalRequestId": request_id}))[
            "status"
        ]
        == "rejected"
    )


GQL_EDIT = """
mutation Edit($input: BulkEditDocumentsInput!) {
  documentsBulkEdit(input: $input) { status approvalRequestId capability { slug } matched }
}
"""
GQL_APPROVE = """
mutation Approve($id: String!) {
  approvalsApprove(input: {approvalRequestId: $id}) { status capabilitySlug result }
}
"""
GQL_GET = """
query Get($id: String!) {
  approvalsGet(input: {approvalRequestId: $id}) { status requestedBy input title }
}
"""


async def gql(client: httpx.AsyncClient, tenant: Tenant, query: str, **variables: Any) -> Any:
    response = await client.post(
        "/v1/graphql", json={"query": query, "variables": variables}, headers=tenant.headers()
    )
    body = response.json()
    assert "errors" not in body, body
    return body["data"]


async def test_graphql_request_get_and_approve(client: httpx.AsyncClient, seeded: Tenant) -> None:
    edit = {"merchant": "starbucks", "changes": {"category": "Coffee"}, "dryRun": False}
    waiting = (await gql(client, seeded, GQL_EDIT, input=edit))["documentsBulkEdit"]
    assert waiting["status"] == "approval_required" and waiting["matched"] is None
    assert waiting["capability"] == {"slug": "documents.bulk-edit"}
    request_id = waiting["approvalRequestId"]
    shown = (await gql(client, seeded, GQL_GET, id=request_id))["approvalsGet"]
    assert shown["status"] == "pending" and shown["input"]["dryRun"] is False
    approved = (await gql(client, seeded, GQL_APPROVE, id=request_id))["approvalsApprove"]
    assert approved["status"] == "executed" and approved["result"]["modified"] == 2
    preview = (await gql(client, seeded, GQL_EDIT, input={**edit, "dryRun": True}))[
        "documentsBulkEdit"
    ]
    assert preview["status"] is None and preview["matched"] == 2

    reject = """
    mutation Reject($id: String!, $message: String) {
      approvalsReject(input: {approvalRequestId: $id, message: $message}) {
        status rejectionMessage
      }
    }
    """
    second = await gql(client, seeded, GQL_EDIT, input={**edit, "changes": {"category": "X"}})
    second_id = second["documentsBulkEdit"]["approvalRequestId"]
    rejected = (await gql(client, seeded, reject, id=second_id, message="no"))["approvalsReject"]
    assert rejected == {"status": "rejected", "rejectionMessage": "no"}
    response = await client.post(
        "/v1/graphql",
        json={"query": GQL_APPROVE, "variables": {"id": second_id}},
        headers=seeded.headers(),
    )
    error = response.json()["errors"][0]
    assert error["extensions"]["status"] == 400 and "already rejected" in error["message"]


def test_mcp_approval_payload_names_the_review_tools() -> None:
    value = {
        "status": "approval_required",
        "approvalRequestId": "apr_1",
        "capability": {"name": "documentsBulkEdit", "slug": "documents.bulk-edit"},
        "title": "Bulk-edit documents",
        "description": "…",
    }
    answer = approval_result(value)
    assert answer.structured_content is not None
    assert answer.structured_content["nextTools"] == [
        "approvals_get",
        "approvals_approve",
        "approvals_reject",
    ]
    assert "approvals_approve" in answer.content[-1].text  # type: ignore[union-attr]
    assert "apr_1" in answer.content[-1].text  # type: ignore[union-attr]
