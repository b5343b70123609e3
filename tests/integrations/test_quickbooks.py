"""QuickBooks Online end to end against the fake: the realm from the redirect, a Purchase for a
receipt and a Bill for an invoice (vendor created when unknown, accounts resolved by name),
the Attachable upload, a retry after a lost answer without duplicates, unlink, disconnect."""

from __future__ import annotations

from decimal import Decimal

import pytest

from app.host.workers import WorkerPool
from persistence.store import Store
from tests.clock import ManualClock
from tests.integrations.conftest import ORIGINAL, Api, add_document
from tests.integrations.fakes import Failure, FakeQuickBooks
from tests.integrations.test_xero import deliver

pytestmark = pytest.mark.wire
REALM = FakeQuickBooks.realm


async def test_connect_takes_the_realm_from_the_redirect(api: Api) -> None:
    connected = await api.connect("quickbooks")
    assert connected["tenants"] == [{"id": REALM, "name": "Sandbox Company_US_1"}]
    listed = await api.ok("integrations.list", {"status": "connected"})
    assert [i["id"] for i in listed["integrations"]] == ["quickbooks"]


async def test_receipt_becomes_a_purchase_with_a_new_vendor_and_attachable(
    api: Api, store: Store, quickbooks: FakeQuickBooks, workers: WorkerPool, clock: ManualClock
) -> None:
    await add_document(store, api.tenant, "doc_r1", paymentMethod="card", currency="USD")
    await api.connect("quickbooks")
    send = {"documentId": "doc_r1", "integrationId": "quickbooks", "tenantId": REALM}
    preview = await api.ok("integrations.send", send)
    vendor, purchase, upload = preview["requests"]
    assert vendor["body"] == {"DisplayName": "Pret A Manger"}
    assert purchase["url"] == f"{quickbooks.url}/v3/company/{REALM}/purchase"
    assert purchase["body"] == {
        "TxnDate": "2024-03-14",
        "CurrencyRef": {"value": "USD"},
        "DocNumber": "R-0042",
        "PrivateNote": "fincap document doc_r1",
        "GlobalTaxCalculation": "TaxInclusive",
        "Line": [
            {
                "DetailType": "AccountBasedExpenseLineDetail",
                "Amount": 12.0,
                "Description": "Pret A Manger (Meals)",
                "AccountBasedExpenseLineDetail": {"AccountRef": {"value": "13"}},
            }
        ],
        "PaymentType": "CreditCard",
        "AccountRef": {"value": "35"},
        "EntityRef": {"value": "{VendorId}", "type": "Vendor"},
    }
    assert upload["body"]["AttachableRef"] == [
        {"EntityRef": {"type": "Purchase", "value": "{InvoiceId}"}}
    ]
    assert any("will be created" in w for w in preview["warnings"])
    assert quickbooks.bills == {} and quickbooks.vendors == {}

    await api.ok("approvals.configure", {"capabilitySlug": "integrations.send", "gated": False})
    quickbooks.fail = [Failure("POST", "/purchase", 500, after=True)]
    queued = await api.ok("integrations.send", {**send, "dryRun": False})
    await deliver(workers, clock)
    assert quickbooks.vendors == {"Pret A Manger": "100"}
    (record,) = quickbooks.bills.values()
    assert record["EntityRef"] == {"value": "100", "type": "Vendor"}
    (attachable,) = quickbooks.attachments[record["Id"]]
    assert attachable["content"] == ORIGINAL and attachable["FileName"] == "receipt-2024.pdf"
    export = await api.ok("exports.get", {"id": queued["exportRecordId"]})
    assert export["status"] == "exported" and export["attempts"] == 2
    assert export["remote"]["entity"] == "Purchase" and export["remote"]["vendorId"] == "100"

    unlink = {"documentId": "doc_r1", "dryRun": False}
    await api.ok("approvals.configure", {"capabilitySlug": "integrations.unlink", "gated": False})
    preview_unlink = await api.ok("integrations.unlink", {"documentId": "doc_r1"})
    assert preview_unlink["remoteInvoice"]["total"] == 12.0
    assert [a["id"] for a in preview_unlink["orphanedAttachments"]] == [attachable["Id"]]
    done = await api.ok("integrations.unlink", unlink)
    assert done["status"] == "unlinked" and done["remoteInvoice"]["status"] == "DELETED"
    assert quickbooks.bills == {}


async def test_invoice_becomes_a_bill_for_a_known_vendor(
    api: Api, store: Store, quickbooks: FakeQuickBooks, workers: WorkerPool, clock: ManualClock
) -> None:
    quickbooks.vendors["Acme Supplies"] = "77"
    await add_document(
        store,
        api.tenant,
        "doc_i1",
        merchant="Acme Supplies",
        docType="invoice",
        invoiceId="INV-2024-000000000000001",
        category="Travel",
        amount=Decimal("30.00"),
        taxAmount=None,
        currency="USD",
        lineItems=[
            {"description": "Train", "quantity": Decimal(1), "amount": Decimal("20.00")},
            {"description": "Taxi", "quantity": Decimal(1), "amount": Decimal("10.00")},
        ],
    )
    await api.connect("quickbooks")
    send = {"documentId": "doc_i1", "integrationId": "quickbooks", "tenantId": REALM}
    preview = await api.ok("integrations.send", send)
    bill, _ = preview["requests"]
    assert bill["body"]["VendorRef"] == {"value": "77"}
    assert bill["body"]["DueDate"] == "2024-04-13"
    assert bill["body"]["DocNumber"] == "INV-2024-000000000000"  # QuickBooks keeps 21
    assert any("DocNumber" in w for w in preview["warnings"])
    assert [line["Amount"] for line in bill["body"]["Line"]] == [20.0, 10.0]
    assert {
        line["AccountBasedExpenseLineDetail"]["AccountRef"]["value"]
        for line in bill["body"]["Line"]
    } == {"58"}
    queued = await api.approve(await api.ok("integrations.send", {**send, "dryRun": False}))
    await deliver(workers, clock)
    (record,) = quickbooks.bills.values()
    assert record["Entity"] == "bill" and record["TotalAmt"] == 30.0
    export = await api.ok("exports.get", {"id": queued["exportRecordId"]})
    assert export["status"] == "exported" and export["remote"]["entity"] == "Bill"


async def test_wrong_realm_and_disconnect(
    api: Api, store: Store, quickbooks: FakeQuickBooks
) -> None:
    await add_document(store, api.tenant, "doc_r1")
    await api.connect("quickbooks")
    wrong = await api.call(
        "integrations.send",
        {"documentId": "doc_r1", "integrationId": "quickbooks", "tenantId": "123"},
    )
    assert wrong.status_code == 400 and "tenantId" in wrong.text
    view = await api.ok("integrations.disconnect", {"integrationId": "quickbooks"})
    assert view["status"] == "available"
    assert len(quickbooks.revoked) == 1 and quickbooks.revoked[0].startswith("rt-")
