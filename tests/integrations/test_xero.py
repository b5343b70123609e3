"""Xero end to end: OAuth connection, preview, approval, delivery by the worker, retries without
duplicates, token refresh, unlink; through REST and GraphQL against the fake Xero."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from app.host.workers import WorkerPool
from persistence.store import Store
from resolvers.services.connections.integration_connections import seal, unseal
from tests.clock import ManualClock
from tests.conftest import Tenant
from tests.integrations.conftest import ORIGINAL, Api, add_document
from tests.integrations.fakes import Failure, FakeXero

pytestmark = pytest.mark.wire
SEND = {"documentId": "doc_r1", "integrationId": "xero", "tenantId": "tenant-acme"}


async def test_connect_lists_tenants_and_keeps_tokens_encrypted(
    api: Api, store: Store, xero: FakeXero
) -> None:
    before = await api.ok("integrations.list", {"category": "accounting"})
    assert [(i["id"], i["status"]) for i in before["integrations"]] == [
        ("quickbooks", "available"),
        ("xero", "available"),
    ]
    connected = await api.connect("xero")
    assert connected["tenants"] == [
        {"id": "tenant-acme", "name": "Acme Ltd"},
        {"id": "tenant-beta", "name": "Beta GmbH"},
    ]
    listed = await api.ok("integrations.list", {"status": "connected"})
    (xero_view,) = listed["integrations"]
    assert xero_view["id"] == "xero" and xero_view["category"] == "accounting"
    assert [t["id"] for t in xero_view["tenants"]] == ["tenant-acme", "tenant-beta"]
    assert xero_view["settings"]["accountCodes"]["Meals"] == "420"
    assert (await api.ok("integrations.list", {"category": "email"}))["integrations"] == []
    stored = await store.db["integration_connections"].find_one({"integrationId": "xero"})
    assert stored is not None
    for token in xero.access:  # no token is stored in the clear
        assert token not in str(stored)
    bad_filter = await api.call("integrations.list", {"status": "broken"})
    assert bad_filter.status_code == 400 and "status" in bad_filter.text


async def test_callback_refuses_a_forged_state(api: Api) -> None:
    forged = await api.http.get(
        "/v1/integrations/xero/callback?code=abc&state=forged.state",
        headers={"Accept": "application/json"},
    )
    assert forged.status_code == 400 and "state" in forged.text
    page = await api.http.get("/v1/integrations/xero/callback?error=access_denied")
    assert page.status_code == 400 and "did not grant access" in page.text


async def test_preview_is_the_exact_request_and_sends_nothing(
    api: Api, store: Store, xero: FakeXero
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    preview = await api.ok("integrations.send", SEND)
    assert preview["status"] == "preview" and preview["dryRun"] is True
    bill, attachment = preview["requests"]
    assert bill["method"] == "PUT" and bill["url"] == f"{xero.url}/api.xro/2.0/Invoices"
    invoice = bill["body"]["Invoices"][0]
    assert invoice == {
        "Type": "ACCPAY",
        "Contact": {"Name": "Pret A Manger"},
        "Date": "2024-03-14",
        "DueDate": "2024-03-14",
        "CurrencyCode": "GBP",
        "LineAmountTypes": "Inclusive",
        "LineItems": [
            {
                "Description": "Pret A Manger (Meals)",
                "Quantity": 1.0,
                "UnitAmount": 12.0,
                "LineAmount": 12.0,
                "AccountCode": "420",
                "TaxAmount": 2.0,
            }
        ],
        "InvoiceNumber": "R-0042",
        "Status": "DRAFT",
    }
    assert attachment["url"].endswith("/Invoices/{InvoiceID}/Attachments/receipt-2024.pdf")
    assert attachment["headers"] == {"Content-Type": "application/pdf"}
    assert any("Unknown vendor" in w for w in preview["warnings"])
    assert any("No tax rate mapped for 20%" in w for w in preview["warnings"])
    assert xero.bills == {}

    # Mapping the rate and the category changes the request; a known contact is used by id.
    await api.ok(
        "integrations.configure",
        {"integrationId": "xero", "taxCodes": {"20": "INPUT2"}, "accountCodes": {"Meals": "425"}},
    )
    xero.vendors["Pret A Manger"] = "contact-pret"
    mapped = await api.ok("integrations.send", SEND)
    line = mapped["requests"][0]["body"]["Invoices"][0]["LineItems"][0]
    assert line["TaxType"] == "INPUT2" and line["AccountCode"] == "425"
    assert mapped["requests"][0]["body"]["Invoices"][0]["Contact"] == {"ContactID": "contact-pret"}
    assert not any("tax rate" in w or "Unknown vendor" in w for w in mapped["warnings"])


async def deliver(workers: WorkerPool, clock: ManualClock, rounds: int = 8) -> None:
    """Run due jobs, moving the clock past each backoff, until nothing is left."""
    for _ in range(rounds):
        await workers.run_until_idle()
        if await workers.store.jobs.pending_count() == 0:
            return
        clock.advance(400)


async def test_execute_goes_through_approval_and_the_worker_delivers_once(
    api: Api, store: Store, xero: FakeXero, workers: WorkerPool, clock: ManualClock
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    waiting = await api.ok("integrations.send", {**SEND, "dryRun": False})
    assert waiting["capability"] == {"name": "integrationsSend", "slug": "integrations.send"}
    assert xero.bills == {} and await store.jobs.pending_count() == 0
    queued = await api.approve(waiting)
    assert queued["status"] == "queued" and queued["exportRecordId"].startswith("exp_")
    export = await api.ok("exports.get", {"id": queued["exportRecordId"]})
    assert export["status"] == "queued" and export["payloadSummary"]["total"] == 12.0

    await deliver(workers, clock)
    (invoice,) = xero.bills.values()
    assert invoice["InvoiceNumber"] == "R-0042" and invoice["TenantId"] == "tenant-acme"
    (attached,) = xero.attachments[invoice["InvoiceID"]]
    assert attached["content"] == ORIGINAL and attached["MimeType"] == "application/pdf"
    export = await api.ok("exports.get", {"id": queued["exportRecordId"]})
    assert export["status"] == "exported"
    assert export["remote"]["invoiceId"] == invoice["InvoiceID"]
    assert export["remote"]["attachmentIds"] == [attached["AttachmentID"]]
    assert [h["status"] for h in export["history"]] == ["queued", "sending", "exported"]
    document = await api.ok("documents.get", {"id": "doc_r1"})
    assert document["document"]["exportStatus"] == "exported"
    exported = await api.ok(
        "documents.search", {"exportStatus": "exported", "requiredFields": ["exportStatus"]}
    )
    assert [d["id"] for d in exported["documents"]] == ["doc_r1"]

    graph = await api.http.post(
        "/v1/graphql",
        json={
            "query": "query E($id: String!) { exportsGet(input: {id: $id}) "
            "{ status remote { invoiceId attachmentIds } payloadSummary { vendor total } } }",
            "variables": {"id": queued["exportRecordId"]},
        },
        headers=api.tenant.headers(),
    )
    assert graph.json()["data"]["exportsGet"] == {
        "status": "exported",
        "remote": {"invoiceId": invoice["InvoiceID"], "attachmentIds": [attached["AttachmentID"]]},
        "payloadSummary": {"vendor": "Pret A Manger", "total": 12.0},
    }

    # Sending the same document to the same tenant again is refused (before approval).
    again = await api.call("integrations.send", {**SEND, "dryRun": False})
    assert again.status_code == 400 and "unlink it first" in again.text


async def test_retries_after_429_and_a_lost_500_create_one_bill(
    api: Api, store: Store, xero: FakeXero, workers: WorkerPool, clock: ManualClock
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    await api.ok("approvals.configure", {"capabilitySlug": "integrations.send", "gated": False})
    xero.fail = [
        Failure("PUT", "/Invoices", 429),  # refused before any work
        Failure("PUT", "/Invoices", 500, after=True),  # created, but the answer is lost
        Failure("PUT", "/Attachments/", 503),
    ]
    queued = await api.ok("integrations.send-to-integration", {**SEND, "dryRun": False})
    assert queued["status"] == "queued"
    await deliver(workers, clock)
    assert len(xero.bills) == 1
    (invoice_id,) = xero.bills
    assert len(xero.attachments[invoice_id]) == 1
    export = await api.ok("exports.get", {"id": queued["exportRecordId"]})
    assert export["status"] == "exported" and export["attempts"] == 4
    assert export["remote"]["invoiceId"] == invoice_id
    statuses = [h["status"] for h in export["history"]]
    assert statuses.count("sending") == 4 and statuses[-1] == "exported"
    assert export["error"] is None and export["errorReason"] is None  # cleared on success
    assert all(f.times == 0 for f in xero.fail)


async def test_a_refused_bill_fails_the_export_without_retrying(
    api: Api, store: Store, xero: FakeXero, workers: WorkerPool, clock: ManualClock
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    await api.ok("approvals.configure", {"capabilitySlug": "integrations.send", "gated": False})
    xero.fail = [Failure("PUT", "/Invoices", 400)]
    queued = await api.ok("integrations.send", {**SEND, "dryRun": False})
    await deliver(workers, clock)
    export = await api.ok("exports.get", {"id": queued["exportRecordId"]})
    assert export["status"] == "failed" and "400" in export["error"]
    assert export["errorReason"] == "refused"  # its kind, for scripts, beside the words
    assert export["attempts"] == 1 and xero.bills == {}
    document = await api.ok("documents.get", {"id": "doc_r1"})
    assert document["document"]["exportStatus"] == "not-exported"


async def test_an_expiring_token_is_refreshed_once_and_rotated(
    api: Api, store: Store, xero: FakeXero
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    xero.expire_access_tokens()
    # The stored expiry says the token is fresh; make it say otherwise, as time would.
    services = api.http._transport.app.state.services  # type: ignore[attr-defined]
    connection = await store.integrations.get(api.tenant.org_id, "xero")
    assert connection is not None
    tokens = unseal(services, api.tenant.org_id, "xero", connection["tokens"])
    stale = dataclasses.replace(tokens, expires_at=0)
    await store.db["integration_connections"].update_one(
        {"_id": connection["_id"]},
        {"$set": {"tokens": seal(services, api.tenant.org_id, "xero", stale)}},
    )
    preview = await api.ok("integrations.send", SEND)
    assert preview["status"] == "preview" and xero.refreshes == 1
    again = await api.ok("integrations.send", SEND)
    assert again["status"] == "preview" and xero.refreshes == 1  # the new token is kept
    # The spent refresh token is refused by the provider (rotation).
    assert tokens.refresh_token not in xero.refresh_tokens


async def test_unlink_previews_then_deletes_the_draft_and_resets_the_document(
    api: Api, store: Store, xero: FakeXero, workers: WorkerPool, clock: ManualClock
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    queued = await api.approve(await api.ok("integrations.send", {**SEND, "dryRun": False}))
    await deliver(workers, clock)
    (invoice_id,) = xero.bills
    unlink = {"documentId": "doc_r1", "exportRecordId": queued["exportRecordId"]}
    preview = await api.ok("integrations.unlink", unlink)
    assert preview["status"] == "preview" and preview["action"] == "delete"
    assert preview["remoteInvoice"]["status"] == "DRAFT"
    assert preview["remoteInvoice"]["number"] == "R-0042"
    assert [a["fileName"] for a in preview["orphanedAttachments"]] == ["receipt-2024.pdf"]
    assert xero.bills[invoice_id]["Status"] == "DRAFT"

    waiting = await api.ok("integrations.unlink-document", {**unlink, "dryRun": False})
    assert waiting["capability"]["slug"] == "integrations.unlink"
    assert xero.bills[invoice_id]["Status"] == "DRAFT"
    done = await api.approve(waiting)
    assert done["status"] == "unlinked" and done["exportStatus"] == "not-exported"
    assert xero.bills[invoice_id]["Status"] == "DELETED"
    export = await api.ok("exports.get", {"id": queued["exportRecordId"]})
    assert export["status"] == "unlinked"
    document = await api.ok("documents.get", {"id": "doc_r1"})
    assert document["document"]["exportStatus"] == "not-exported"
    twice = await api.call("integrations.unlink", {**unlink, "dryRun": False})
    assert twice.status_code == 400 and "unlinked" in twice.text


async def test_bad_input_is_a_clear_4xx_and_sends_nothing(
    api: Api, store: Store, xero: FakeXero, bob: Tenant
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await add_document(store, bob, "doc_bob")
    not_connected = await api.call("integrations.send", SEND)
    assert not_connected.status_code == 400 and "not connected" in not_connected.text
    await api.connect("xero")
    calls = len(xero.calls)
    cases = [
        ({**SEND, "documentId": "doc_nope"}, 404, "doc_nope"),
        ({**SEND, "documentId": "doc_bob"}, 404, "doc_bob"),
        ({**SEND, "tenantId": "tenant-evil"}, 400, "tenantId"),
        ({**SEND, "integrationId": "sage"}, 404, "sage"),
        ({**SEND, "tenantId": ""}, 400, "tenantId"),
        ({"documentId": "doc_r1", "integrationId": "xero"}, 400, "tenantId"),
        ({**SEND, "dryRun": "no"}, 400, "dryRun"),
    ]
    for body, status, named in cases:
        for dry_run in (True, False):
            sent = body if "dryRun" in body else {**body, "dryRun": dry_run}
            response = await api.call("integrations.send", sent)
            assert response.status_code == status, (sent, response.text)
            assert named in response.text
    assert len(xero.calls) == calls and xero.bills == {}
    assert await store.db["approval_requests"].count_documents({}) == 0
    assert await store.db["exports"].count_documents({}) == 0
    unknown_export = await api.call("exports.get", {"id": "exp_nope"})
    assert unknown_export.status_code == 404
    unlink_unexported = await api.call("integrations.unlink", {"documentId": "doc_r1"})
    assert unlink_unexported.status_code == 400 and "not exported" in unlink_unexported.text


async def test_graphql_lists_previews_and_queues(api: Api, store: Store, xero: FakeXero) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    query = """
    query { integrationsList(input: {category: accounting}) {
      integrations { id status tenants { id name } } } }
    """
    response = await api.http.post(
        "/v1/graphql", json={"query": query}, headers=api.tenant.headers()
    )
    listed = response.json()["data"]["integrationsList"]["integrations"]
    assert {i["id"]: i["status"] for i in listed} == {
        "quickbooks": "available",
        "xero": "connected",
    }
    mutation = """
    mutation Send($input: SendToIntegrationInput!) {
      integrationsSend(input: $input) {
        status approvalRequestId exportRecordId warnings requests { step method url body }
      }
    }
    """
    preview = await api.http.post(
        "/v1/graphql",
        json={"query": mutation, "variables": {"input": SEND}},
        headers=api.tenant.headers(),
    )
    sent = preview.json()["data"]["integrationsSend"]
    assert sent["status"] == "preview" and sent["requests"][0]["step"] == "bill"
    assert sent["requests"][0]["body"]["Invoices"][0]["Type"] == "ACCPAY"
    executed = await api.http.post(
        "/v1/graphql",
        json={"query": mutation, "variables": {"input": {**SEND, "dryRun": False}}},
        headers=api.tenant.headers(),
    )
    waiting = executed.json()["data"]["integrationsSend"]
    assert waiting["status"] == "approval_required" and waiting["approvalRequestId"]
    wrong = await api.http.post(
        "/v1/graphql",
        json={"query": mutation, "variables": {"input": {**SEND, "tenantId": "tenant-evil"}}},
        headers=api.tenant.headers(),
    )
    assert wrong.json()["errors"][0]["extensions"]["status"] == 400
    assert xero.bills == {}


async def test_disconnect_revokes_and_forgets(api: Api, xero: FakeXero) -> None:
    await api.connect("xero")
    view = await api.ok("integrations.disconnect", {"integrationId": "xero"})
    assert view["status"] == "available" and view["tenants"] == []
    assert sorted(xero.revoked) == ["conn-tenant-acme", "conn-tenant-beta"]
    again = await api.call("integrations.disconnect", {"integrationId": "xero"})
    assert again.status_code == 400


async def test_two_concurrent_sends_queue_one_export(api: Api, store: Store) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    await api.ok("approvals.configure", {"capabilitySlug": "integrations.send", "gated": False})
    body = {**SEND, "dryRun": False}
    first, second = await asyncio.gather(
        api.call("integrations.send", body), api.call("integrations.send", body)
    )
    assert sorted([first.status_code, second.status_code]) == [200, 400]
    assert await store.db["exports"].count_documents({}) == 1
    assert await store.jobs.pending_count() == 1


async def test_giving_up_fails_the_export_and_a_failed_one_can_be_sent_again(
    api: Api, store: Store, xero: FakeXero, workers: WorkerPool, clock: ManualClock
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    await api.ok("approvals.configure", {"capabilitySlug": "integrations.send", "gated": False})
    xero.fail = [Failure("PUT", "/Invoices", 503, times=6)]
    queued = await api.ok("integrations.send", {**SEND, "dryRun": False})
    await deliver(workers, clock, rounds=10)
    export = await api.ok("exports.get", {"id": queued["exportRecordId"]})
    assert export["status"] == "failed" and "gave up after 6 attempts" in export["error"]
    assert export["errorReason"] == "provider_error"  # the last attempt's kind (503)
    assert xero.bills == {}
    again = await api.ok("integrations.send", {**SEND, "dryRun": False})
    await deliver(workers, clock)
    assert (await api.ok("exports.get", {"id": again["exportRecordId"]}))["status"] == "exported"
    assert len(xero.bills) == 1


async def test_a_revoked_grant_marks_the_integration_in_error(
    api: Api, store: Store, xero: FakeXero
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("xero")
    xero.refresh_tokens.clear()  # the user revoked access at Xero
    services = api.http._transport.app.state.services  # type: ignore[attr-defined]
    connection = await store.integrations.get(api.tenant.org_id, "xero")
    assert connection is not None
    tokens = unseal(services, api.tenant.org_id, "xero", connection["tokens"])
    await store.db["integration_connections"].update_one(
        {"_id": connection["_id"]},
        {
            "$set": {
                "tokens": seal(
                    services, api.tenant.org_id, "xero", dataclasses.replace(tokens, expires_at=0)
                )
            }
        },
    )
    refused = await api.call("integrations.send", SEND)
    assert refused.status_code == 400 and "connect again" in refused.text
    listed = await api.ok("integrations.list", {"status": "error"})
    assert [i["id"] for i in listed["integrations"]] == ["xero"]
    assert "invalid_grant" in listed["integrations"][0]["lastError"]
    assert listed["integrations"][0]["lastErrorReason"] == "grant_revoked"
