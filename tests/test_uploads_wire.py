"""files.upload → durable processing → documents, over the wire (GridFS needs a real server)."""

from __future__ import annotations

import asyncio
import base64
import io
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image, ImageDraw

from app.host.config import Settings
from app.host.workers import WorkerPool
from engines.currency import default_rate_book
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.clock import ManualClock
from tests.conftest import Tenant, asgi_client, make_tenant, spawn_worker, worker_pool
from tests.documents.conftest import call, result

pytestmark = pytest.mark.wire
FIXTURES = Path(__file__).parent / "fixtures" / "extraction"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def pool_for(store: Store) -> WorkerPool:
    return worker_pool(store, count=1, lease_s=30)


def later_store(store: Store, seconds: float) -> Store:
    """The same database as seen ``seconds`` from now (leases granted until then have ended)."""
    clock = ManualClock()
    clock.advance(seconds)
    return Store(store.db, clock)


@pytest.fixture
async def tenants(wire_store: Store) -> tuple[Tenant, Tenant]:
    return (
        await make_tenant(wire_store, "alice@example.com", "Alice Co"),
        await make_tenant(wire_store, "bob@example.com", "Bob Ltd"),
    )


@pytest.fixture
async def http(wire_store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(wire_store, registry) as client:
        yield client


async def upload(
    http: httpx.AsyncClient, tenant: Tenant, name: str, data: bytes, mime: str | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"fileName": name, "base64Data": b64(data)}
    if mime:
        body["mimeType"] = mime
    accepted: dict[str, Any] = result(await call(http, tenant, "files.upload", body))
    return accepted


async def get(http: httpx.AsyncClient, tenant: Tenant, document_id: str) -> dict[str, Any]:
    document: dict[str, Any] = result(
        await call(http, tenant, "documents.get", {"id": document_id})
    )["document"]
    return document


async def test_upload_is_processed_into_a_document(
    http: httpx.AsyncClient, wire_store: Store, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, bob = tenants
    pdf = fixture("text-layer.pdf")
    accepted = await upload(http, alice, "northwind.pdf", pdf, "application/pdf")
    assert accepted["status"] == "queued"
    queued = await get(http, alice, accepted["documentId"])
    assert queued["processingStatus"] == "queued" and queued["file"]["sha256"]

    assert await pool_for(wire_store).run_until_idle() == 1
    document = await get(http, alice, accepted["documentId"])
    assert document["processingStatus"] == "processed", document["processingReason"]
    assert document["merchant"] == "Northwind Consulting GmbH"
    assert document["amount"] == 1190.0 and document["currency"] == "EUR"
    assert document["docDate"] == "2024-02-29" and document["invoiceId"] == "INV-2024-0042"
    assert document["category"] and document["source"] == "upload"
    # Every extracted core field says how sure it is and where on the page it was read.
    evidence = {e["field"]: e for e in document["evidence"]}
    assert {"merchant", "amount", "docDate", "invoiceId", "currency"} <= set(evidence)
    assert evidence["amount"]["text"] == "Total EUR 1,190.00" and evidence["amount"]["page"] == 1
    assert all(0 <= value <= 1 for value in evidence["amount"]["box"])
    assert all(0 <= e["confidence"] <= 1 for e in evidence.values())
    assert evidence["amount"]["confidence"] >= 0.8 and evidence["docDate"]["confidence"] >= 0.8
    quote = default_rate_book().quote("EUR", "USD", __import__("datetime").date(2024, 2, 29))
    assert document["preferredCurrency"] == "USD"
    assert document["conversionRate"] == pytest.approx(float(quote.rate))
    assert document["file"]["fileName"] == "northwind.pdf" and document["file"]["size"] == len(pdf)

    activity = await wire_store.activity.get(alice.org_id, accepted["activityId"])
    assert activity is not None and activity["sourceType"] == "upload"
    assert [h["status"] for h in activity["history"]] == ["queued", "processing", "processed"]
    assert "Northwind" in activity["reasoning"] and activity["documentIds"] == [
        accepted["documentId"]
    ]

    # The original streams back, byte for byte, only to its own workspace.
    path = document["file"]["url"].split("/v1/", 1)[1]
    original = await http.get(f"/v1/{path}", headers=alice.headers())
    assert original.status_code == 200 and original.content == pdf
    assert original.headers["content-type"] == "application/pdf"
    assert (await http.get(f"/v1/{path}", headers=bob.headers())).status_code == 404
    assert (await http.get(f"/v1/{path}")).status_code == 401
    assert (
        await call(http, bob, "documents.get", {"id": accepted["documentId"]})
    ).status_code == 404


async def test_photo_duplicate_and_learned_category(
    http: httpx.AsyncClient, wire_store: Store, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    png = fixture("receipt.png")
    first = await upload(http, alice, "cafe.png", png, "image/png")
    await pool_for(wire_store).run_until_idle()
    original = await get(http, alice, first["documentId"])
    assert original["processingStatus"] == "processed"
    assert original["amount"] == 13.5 and original["currency"] == "GBP"

    # A correction of the category steers later documents of the same merchant.
    result(
        await call(
            http,
            alice,
            "documents.update",
            {"id": first["documentId"], "category": "Client Entertainment"},
        )
    )
    second = await upload(http, alice, "cafe-again.png", png, None)  # mimeType inferred
    await pool_for(wire_store).run_until_idle()
    duplicate = await get(http, alice, second["documentId"])
    assert duplicate["processingStatus"] == "warning"
    assert duplicate["duplicateOf"] == first["documentId"]
    assert "Possible duplicate" in duplicate["processingReason"]
    assert duplicate["category"] == "Client Entertainment"
    assert (await get(http, alice, first["documentId"]))["duplicates"] == [second["documentId"]]

    deleted = result(await call(http, alice, "documents.delete", {"id": first["documentId"]}))
    assert deleted["archivedDuplicates"] == [second["documentId"]]


async def test_non_financial_image_is_skipped(
    http: httpx.AsyncClient, wire_store: Store, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    image = Image.new("RGB", (900, 300), "white")
    ImageDraw.Draw(image).text(
        (20, 120), "Happy birthday Anna, see you at the lake on Sunday", fill="black", font_size=32
    )
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    accepted = await upload(http, alice, "card.png", buffer.getvalue(), "image/png")
    await pool_for(wire_store).run_until_idle()
    document = await get(http, alice, accepted["documentId"])
    assert document["processingStatus"] == "skipped"
    assert document["processingReason"]


def _pdf(lines: list[str]) -> bytes:
    from reportlab.lib.pagesizes import A6
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, pagesize=A6)
    for index, line in enumerate(lines):
        pdf.drawString(20, 380 - 18 * index, line)
    pdf.save()
    return buffer.getvalue()


async def test_a_document_without_a_date_ends_warning_with_what_to_check(
    http: httpx.AsyncClient, wire_store: Store, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    pdf = _pdf(["Harbour Supplies Ltd", "Printer paper 12.50", "Total GBP 12.50"])
    accepted = await upload(http, alice, "undated.pdf", pdf, "application/pdf")
    await pool_for(wire_store).run_until_idle()
    document = await get(http, alice, accepted["documentId"])
    assert document["processingStatus"] == "warning"
    assert document["processingReason"].startswith("Please check: no date found.")
    assert document["amount"] == 12.5 and document["docDate"] is None
    activity = await wire_store.activity.get(alice.org_id, accepted["activityId"])
    assert activity is not None and activity["status"] == "warning"


async def test_inspect_compares_stored_and_visible(
    http: httpx.AsyncClient, wire_store: Store, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, bob = tenants
    accepted = await upload(
        http, alice, "northwind.pdf", fixture("text-layer.pdf"), "application/pdf"
    )
    await pool_for(wire_store).run_until_idle()
    result(
        await call(http, alice, "documents.update", {"id": accepted["documentId"], "amount": 999})
    )
    report = result(
        await call(http, alice, "documents.inspect", {"id": accepted["documentId"], "maxPages": 1})
    )
    by_field = {f["field"]: f for f in report["fields"]}
    assert report["pagesRead"] == 1 and report["engine"]
    amount = by_field["amount"]
    assert (amount["stored"], amount["visible"], amount["match"]) == (999.0, 1190.0, False)
    # The person's correction is certain; the report shows where the original has 1190.
    assert amount["confidence"] == 1.0
    assert amount["note"] == (
        "differs from the document; the original shows it on page 1: 'Total EUR 1,190.00'"
    )
    assert (
        amount["evidence"]["text"] == "Total EUR 1,190.00" and len(amount["evidence"]["box"]) == 4
    )
    assert by_field["merchant"]["match"] is True and by_field["invoiceId"]["match"] is True
    assert 0 < by_field["merchant"]["confidence"] <= 1
    stored = {e["field"]: e for e in (await get(http, alice, accepted["documentId"]))["evidence"]}
    assert stored["amount"] == {"field": "amount", "confidence": 1.0, "source": "edited"}
    assert (
        await call(http, bob, "documents.inspect", {"id": accepted["documentId"]})
    ).status_code == 404
    bad = await call(
        http, alice, "documents.inspect", {"id": accepted["documentId"], "maxPages": 6}
    )
    assert bad.status_code == 400 and "maxPages" in bad.json()["error"]["errorMessage"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            {"fileName": "a.pdf", "mimeType": "application/pdf", "base64Data": "%%%not base64%%%"},
            "base64Data: not valid base64",
        ),
        (
            {"fileName": "a.pdf", "mimeType": "application/pdf", "base64Data": b64(b"%PDF")[:-1]},
            "base64Data: not valid base64",
        ),
        (
            {"fileName": "a.png", "mimeType": "application/pdf", "base64Data": "FIXTURE_PNG"},
            "mimeType: says application/pdf but the content is image/png",
        ),
        (
            {
                "fileName": "a.txt",
                "mimeType": "image/png",
                "base64Data": b64(b"just some text, not an image"),
            },
            "the content is not a JPEG, PNG, GIF, WebP, BMP, TIFF or PDF file",
        ),
        (
            {"fileName": "a.svg", "mimeType": "image/svg+xml", "base64Data": "FIXTURE_PNG"},
            "mimeType: Input should be",
        ),
        (
            {"fileName": "", "mimeType": "image/png", "base64Data": "FIXTURE_PNG"},
            "fileName: String should have at least 1 character",
        ),
        (
            {"fileName": "big.pdf", "mimeType": "application/pdf", "base64Data": "BIG"},
            "larger than 10 MB",
        ),
        (
            {"fileName": "zip.zip", "base64Data": b64(b"PK\x03\x04" + b"\0" * 40)},
            "it looks like application/zip",
        ),
    ],
)
async def test_bad_uploads_are_400_and_store_nothing(
    http: httpx.AsyncClient,
    wire_store: Store,
    tenants: tuple[Tenant, Tenant],
    body: dict[str, Any],
    message: str,
) -> None:
    alice, _ = tenants
    if body["base64Data"] == "FIXTURE_PNG":
        body = {**body, "base64Data": b64(fixture("receipt.png"))}
    elif body["base64Data"] == "BIG":
        body = {**body, "base64Data": b64(b"%PDF-1.4\n" + b"0" * (10 * 1024 * 1024))}
    response = await call(http, alice, "files.upload", body)
    assert response.status_code == 400, response.text
    assert message in response.json()["error"]["errorMessage"]
    db = wire_store.db
    assert await db["documents"].count_documents({}) == 0
    assert await db["jobs"].count_documents({}) == 0
    assert await db["originals.files"].count_documents({}) == 0
    assert await db["activity"].count_documents({}) == 0


async def test_dead_workers_job_is_taken_over_without_duplicates(
    http: httpx.AsyncClient, wire_store: Store, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    accepted = await upload(
        http, alice, "northwind.pdf", fixture("text-layer.pdf"), "application/pdf"
    )
    ghost = await wire_store.jobs.claim("ghost-worker", lease_s=60)  # claims, then "dies"
    assert ghost is not None and ghost["attempts"] == 1
    assert await pool_for(wire_store).run_until_idle() == 0  # the lease still holds
    assert await pool_for(later_store(wire_store, 61)).run_until_idle() == 1  # expired: taken over
    job = await wire_store.jobs.get(ghost["_id"])
    assert job is not None and job["status"] == "done" and job["attempts"] == 2
    assert not await wire_store.jobs.complete(ghost["_id"], "ghost-worker")  # too late for it
    assert await wire_store.db["documents"].count_documents({}) == 1
    assert (await get(http, alice, accepted["documentId"]))["processingStatus"] == "processed"


async def test_killed_worker_process_job_is_finished_elsewhere(
    http: httpx.AsyncClient,
    wire_store: Store,
    tenants: tuple[Tenant, Tenant],
    embedded_server: EmbeddedServer,
) -> None:
    alice, _ = tenants
    accepted = await upload(http, alice, "scan.pdf", fixture("scanned.pdf"), "application/pdf")
    worker = spawn_worker(embedded_server, wire_store, lease_s=30)
    try:
        # Inside the job: the pipeline marks the document processing right after the claim,
        # then OCRs a scanned page in a freshly spawned process (seconds).
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            document = await get(http, alice, accepted["documentId"])
            if document["processingStatus"] == "processing":
                break
            await asyncio.sleep(0.01)  # polling for the state, not waiting for time to pass
        else:
            pytest.fail("the worker never started the job")
        worker.send_signal(signal.SIGSTOP)  # frozen: what the store shows now is final
        leased = await wire_store.db["jobs"].find_one({})
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.kill()
        worker.wait(timeout=30)
    # Killed while it held the lease, mid-job: nothing is finished.
    assert leased is not None and leased["status"] == "running", leased
    document = await get(http, alice, accepted["documentId"])
    assert document["processingStatus"] == "processing"
    assert await pool_for(wire_store).run_until_idle() == 0  # its lease still holds
    assert await pool_for(later_store(wire_store, 31)).run_until_idle() == 1  # expired
    job = await wire_store.db["jobs"].find_one({})
    assert job is not None and job["status"] == "done" and job["attempts"] == 2
    assert await wire_store.db["documents"].count_documents({}) == 1
    assert (await get(http, alice, accepted["documentId"]))["processingStatus"] == "processed"


def test_settings_default_to_process_executor() -> None:
    assert Settings().extraction_executor == "process"


async def test_an_upload_whose_intake_was_swept_meanwhile_is_503_and_kept_nowhere(
    http: httpx.AsyncClient,
    wire_store: Store,
    tenants: tuple[Tenant, Tenant],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An upload whose originals took longer to store than the sweep waits finds its intake
    rolled back when it commits: the sender is told to send it again (503 with Retry-After,
    as in an outage), never a 500, and nothing of it is listed."""
    alice, _ = tenants

    async def rolled_back(*args: Any, **kwargs: Any) -> None:
        return None  # what commit answers once the sweep has rolled the intake back

    monkeypatch.setattr(wire_store.intakes, "commit", rolled_back)
    body = {"fileName": "r.png", "mimeType": "image/png", "base64Data": b64(fixture("receipt.png"))}
    response = await call(http, alice, "files.upload", body)
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) > 0
    assert "send it again" in response.json()["error"]["errorMessage"]
    assert await wire_store.db["documents"].count_documents({}) == 0
    assert await wire_store.db["activity"].count_documents({}) == 0
