"""Which of two equal documents is the duplicate does not depend on which job runs first: the
one that arrived first is the original (within one message, the earlier attachment), whatever
order workers take the jobs in, one after the other or at the same time. Wire tests (GridFS)."""

from __future__ import annotations

import asyncio
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from resolvers.services.processing.analyzer import Analyzer
from resolvers.services.processing.pipeline import process_document
from tests.conftest import Tenant
from tests.sources.conftest import SourceApp, fixture
from tests.sources.mail import message
from tests.sources.test_inbound_email import address_of, post_raw

pytestmark = pytest.mark.wire


async def send_two(app: SourceApp, tenant: Tenant, first: tuple[str, bytes], second: Any) -> Any:
    """One message with two attachments; its activity item (documents in attachment order)."""
    address = await address_of(app, tenant)
    mail = message(
        to=address,
        attachments=[(name, mime_of(name), data) for name, data in (first, second)],
    )
    answer = await post_raw(app, mail.as_bytes())
    assert answer.status_code == 200, answer.text
    item = await app.store.activity.get(
        tenant.org_id, answer.json()["data"]["result"]["accepted"][0]["activityId"]
    )
    assert item is not None and len(item["documentIds"]) == 2
    return item


def mime_of(name: str) -> str:
    return "application/pdf" if name.endswith(".pdf") else "image/png"


async def outcome(app: SourceApp, tenant: Tenant, item: Any) -> tuple[Any, Any, Any]:
    first, second = [
        await app.store.documents.reads.get(tenant.org_id, doc_id) for doc_id in item["documentIds"]
    ]
    settled = await app.store.activity.get(tenant.org_id, item["_id"])
    return first, second, settled


@pytest.mark.parametrize("order", ["later first", "at the same time"])
async def test_the_earlier_of_two_identical_attachments_is_the_original(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant], order: str
) -> None:
    alice, _ = tenants
    pdf = fixture("text-layer.pdf")
    item = await send_two(wire_app, alice, ("a.pdf", pdf), ("scan.pdf", pdf))
    # Analysis in one thread (pdfium is not thread-safe), the pipelines interleaved around it.
    services = dataclasses.replace(
        wire_app.workers().services, analyzer=Analyzer(ThreadPoolExecutor(max_workers=1))
    )
    first_id, second_id = item["documentIds"]
    if order == "later first":
        await process_document(services, alice.org_id, second_id, item["_id"])
        await process_document(services, alice.org_id, first_id, item["_id"])
    else:
        await asyncio.gather(
            process_document(services, alice.org_id, second_id, item["_id"]),
            process_document(services, alice.org_id, first_id, item["_id"]),
        )
    first, second, settled = await outcome(wire_app, alice, item)
    assert first["processingStatus"] == "processed" and first["duplicateOf"] is None
    assert second["processingStatus"] == "warning" and second["duplicateOf"] == first_id
    assert first["duplicates"] == [second_id]
    assert settled["status"] == "warning", settled["reasoning"]
    assert "a.pdf: processed" in settled["reasoning"]
    assert f"scan.pdf: warning — Possible duplicate of {first_id}" in settled["reasoning"]


async def test_a_later_copy_finished_first_is_claimed_by_the_earlier_arrival(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant]
) -> None:
    """Two different files of one receipt (a scan and a photo: the same merchant, amount and
    date): the photo, attached second but processed first, ends as the duplicate."""
    alice, _ = tenants
    item = await send_two(
        wire_app,
        alice,
        ("scan.pdf", fixture("scanned.pdf")),
        ("photo.png", fixture("receipt.png")),
    )
    services = wire_app.workers().services
    scan_id, photo_id = item["documentIds"]
    await process_document(services, alice.org_id, photo_id, item["_id"])
    photo = await wire_app.store.documents.reads.get(alice.org_id, photo_id)
    assert photo is not None and photo["processingStatus"] == "processed"  # nothing earlier yet
    await process_document(services, alice.org_id, scan_id, item["_id"])
    scan, photo, settled = await outcome(wire_app, alice, item)
    assert scan["processingStatus"] == "processed" and scan["duplicateOf"] is None
    assert photo["processingStatus"] == "warning" and photo["duplicateOf"] == scan_id
    assert photo["processingReason"].startswith(f"Possible duplicate of {scan_id}: the same")
    assert "it arrived earlier" in photo["processingReason"]
    assert settled["status"] == "warning"
    assert f"photo.png: warning — Possible duplicate of {scan_id}" in settled["reasoning"]
