"""Rules firing on real uploads: files.upload → the processing pipeline (worker, GridFS, text
layer, fields, categorization) → the rules step, over the wire (SecantusDB), through REST and
GraphQL."""

from __future__ import annotations

import asyncio
import base64
import io
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from engines.currency import default_rate_book
from persistence.store import Store
from resolvers import build_job_kinds
from resolvers.framework.registry import Registry
from resolvers.services.processing.analyzer import Analyzer
from tests.conftest import Tenant, asgi_client
from tests.documents.conftest import call, result
from tests.rules.conftest import ungated_tenant
from tests.rules.stand_ins import Calls
from tests.rules.test_firing import with_stand_ins

pytestmark = pytest.mark.wire


def receipt_pdf(lines: list[str]) -> bytes:
    from reportlab.lib.pagesizes import A6
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A6)
    for index, line in enumerate(lines):
        pdf.drawString(20, 380 - 18 * index, line)
    pdf.save()
    return buffer.getvalue()


UBER_RECEIPT = receipt_pdf(
    [
        "Uber B.V.",
        "Receipt",
        "Date: 2024-03-01",
        "Trip fare 21.50",
        "Total EUR 21.50",
        "Thanks for riding",
    ]
)
AWS_INVOICE = receipt_pdf(
    [
        "Amazon Web Services EMEA SARL",
        "Invoice",
        "Invoice number: AWS-2024-118",
        "Invoice date: 2024-03-02",
        "EC2 usage 120.00",
        "Total EUR 120.00",
    ]
)
CHANGE_RECEIPT = receipt_pdf(
    ["Corner Kiosk", "Receipt", "Date: 2024-03-03", "Gum 0.50", "Total USD 0.50"]
)


@pytest.fixture
async def http(wire_store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(wire_store, registry) as client:
        yield client


def workers(store: Store) -> WorkerPool:
    services = build_services(
        Settings(), store, rates=default_rate_book(), analyzer=Analyzer(), registry=with_stand_ins()
    )
    return WorkerPool(services, build_job_kinds(), count=1, lease_s=30)


async def upload(http: httpx.AsyncClient, tenant: Tenant, name: str, data: bytes) -> str:
    accepted = result(
        await call(
            http,
            tenant,
            "files.upload",
            {
                "fileName": name,
                "mimeType": "application/pdf",
                "base64Data": base64.b64encode(data).decode(),
            },
        )
    )
    document_id: str = accepted["documentId"]
    return document_id


async def document(http: httpx.AsyncClient, tenant: Tenant, doc_id: str) -> dict[str, Any]:
    found: dict[str, Any] = result(await call(http, tenant, "documents.get", {"id": doc_id}))
    return found["document"]


async def test_rules_fire_on_uploads(http: httpx.AsyncClient, wire_store: Store) -> None:
    Calls.made.clear()
    alice = await ungated_tenant(wire_store, "alice@example.com", "Alice Co")
    bob = await ungated_tenant(wire_store, "bob@example.com", "Bob Ltd")
    sentences = [
        "Categorize all Uber and Bolt receipts as Travel",
        "When an invoice from Amazon Web Services over 100 EUR arrives, send it to Xero",
        "Archive receipts under 1 dollar",
    ]
    saved = [
        result(
            await call(http, alice, "rules.execute", {"naturalLanguageRule": s, "confirm": True})
        )["rule"]
        for s in sentences
    ]
    # Saved through GraphQL too.
    response = await http.post(
        "/v1/graphql",
        json={
            "query": "mutation($i: ExecuteRuleInput!) { rulesExecute(input: $i) { rule { id "
            "name } } }",
            "variables": {
                "i": {
                    "naturalLanguageRule": "Mark anything from Netflix or "
                    "Spotify as a monthly subscription",
                    "confirm": True,
                }
            },
        },
        headers=alice.headers(),
    )
    assert "errors" not in response.json(), response.json()

    uber = await upload(http, alice, "uber.pdf", UBER_RECEIPT)
    aws = await upload(http, alice, "aws.pdf", AWS_INVOICE)
    kiosk = await upload(http, alice, "kiosk.pdf", CHANGE_RECEIPT)
    bobs_uber = await upload(http, bob, "uber.pdf", UBER_RECEIPT)  # Bob has no rules
    assert await workers(wire_store).run_until_idle() == 4

    ride = await document(http, alice, uber)
    assert ride["processingStatus"] == "processed", ride["processingReason"]
    assert ride["merchant"].lower().startswith("uber") and ride["docType"] == "receipt"
    assert ride["category"] == "Travel"
    assert [(e["field"], e["newValue"], e["via"], e["editedBy"]) for e in ride["editHistory"]] == [
        ("category", "Travel", "rule", saved[0]["id"])
    ]
    assert f"Rule '{saved[0]['name']}': set category to Travel." in ride["processingReason"]
    stored = await wire_store.documents.reads.get(alice.org_id, uber)
    assert stored is not None
    activity = await wire_store.activity.get(alice.org_id, stored["activityId"])
    assert activity is not None and f"Rule '{saved[0]['name']}'" in activity["reasoning"]

    invoice = await document(http, alice, aws)
    assert invoice["docType"] == "invoice" and invoice["amount"] == 120.0, invoice
    sends = [c for c in Calls.made if c[0] == "integrations.send"]
    assert sends == [
        (
            "integrations.send",
            alice.org_id,
            alice.user_id,
            {
                "documentId": aws,
                "integrationId": "int_xero",
                "tenantId": "tenant-1",
                "dryRun": False,
            },
        )
    ]
    assert "sent to xero" in invoice["processingReason"]

    change = await document(http, alice, kiosk)
    assert change["archived"] is True and change["amount"] == 0.5

    bobs = await document(http, bob, bobs_uber)  # Alice's rules never touch Bob's documents
    assert bobs["editHistory"] == [] and "Rule '" not in bobs["processingReason"]

    listed = {
        r["id"]: r["stats"] for r in result(await call(http, alice, "rules.list", {}))["rules"]
    }
    assert listed[saved[0]["id"]]["documentsMatched"] == 1
    assert listed[saved[0]["id"]]["runs"] == 3
    assert listed[saved[1]["id"]]["actionsApplied"] == 1
    assert listed[saved[2]["id"]]["actionsApplied"] == 1
    counted = result(await call(http, alice, "documents.count", {"groupBy": "category"}))
    assert {g["key"]: g["count"] for g in counted["groups"]}.get("Travel") == 1
    assert counted["count"] == 2  # the archived receipt is left out


async def test_require_approval_on_an_upload_holds_the_archive_until_one_approval(
    http: httpx.AsyncClient, wire_store: Store
) -> None:
    alice = await ungated_tenant(wire_store, "alice@example.com", "Alice Co")
    rule = result(
        await call(
            http,
            alice,
            "rules.execute",
            {
                "naturalLanguageRule": "Require approval and archive receipts under 1 dollar",
                "confirm": True,
            },
        )
    )["rule"]
    kiosk = await upload(http, alice, "kiosk.pdf", CHANGE_RECEIPT)
    assert await workers(wire_store).run_until_idle() == 1

    change = await document(http, alice, kiosk)
    assert change["amount"] == 0.5 and change["archived"] is False  # held, not applied
    reason = change["processingReason"]
    assert f"Rule '{rule['name']}': waiting for approval apr_" in reason
    request_id = reason.split("waiting for approval ", 1)[1].split(" ")[0]
    stored = await wire_store.documents.reads.get(alice.org_id, kiosk)
    assert stored is not None
    activity = await wire_store.activity.get(alice.org_id, stored["activityId"])
    assert activity is not None and f"waiting for approval {request_id}" in activity["reasoning"]
    listed = result(await call(http, alice, "rules.list", {}))["rules"]
    assert listed[0]["stats"]["awaitingApproval"] == [request_id]

    # Four approvals at once over the wire: one claims the request and runs it.
    answers = await asyncio.gather(
        *(
            call(http, alice, "approvals.approve", {"approvalRequestId": request_id})
            for _ in range(4)
        )
    )
    assert sorted(a.status_code for a in answers) == [200, 400, 400, 400]
    change = await document(http, alice, kiosk)
    assert change["archived"] is True
    assert [(e["field"], e["via"]) for e in change["editHistory"]] == [("archived", "rule")]
    activity = await wire_store.activity.get(alice.org_id, stored["activityId"])
    assert activity is not None
    assert f"approval {request_id} granted by alice@example.com: archived" in activity["reasoning"]
