"""Inbound email end to end: a real SMTP client → the aiosmtpd receiver, and a relay's HTTP
post → documents and activity items; refused mail leaves nothing stored. Wire tests (GridFS)."""

from __future__ import annotations

import asyncio
import smtplib
from collections.abc import AsyncIterator
from email.message import EmailMessage
from typing import Any

import pytest

from app.inbound.smtp import start_smtp_server
from tests.conftest import Tenant
from tests.graphql.helpers import gql
from tests.sources.conftest import (
    INBOUND_SECRET,
    SourceApp,
    call,
    document,
    fixture,
    stored,
)
from tests.sources.mail import ORDER_CONFIRMATION_HTML, malformed_multipart, message

pytestmark = pytest.mark.wire


@pytest.fixture
async def smtp_port(wire_app: SourceApp) -> AsyncIterator[int]:
    server = await start_smtp_server(wire_app.services, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


def send(
    port: int, mail: EmailMessage | bytes, rcpt: str, sender: str = "carol@example.org"
) -> Any:
    """Deliver over SMTP with smtplib (in a thread: the receiver shares the test's loop)."""

    def deliver() -> Any:
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
            if isinstance(mail, bytes):
                return client.sendmail(sender, [rcpt], mail)
            # send_message writes CRLF line ends, as SMTP requires.
            return client.send_message(mail, sender, [rcpt])

    return asyncio.to_thread(deliver)


def send_without_size(port: int, rcpt: str, data: bytes) -> int:
    """MAIL, RCPT and DATA by hand, without announcing the size: the reply code to DATA."""
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        client.ehlo()
        client.mail("carol@example.org")
        client.rcpt(rcpt)
        code, _ = client.data(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
        return code


async def address_of(app: SourceApp, tenant: Tenant) -> str:
    found: dict[str, Any] = await call(app.http, tenant, "workspaces.get-inbound-address", {})
    address: str = found["address"]
    return address


async def post_raw(app: SourceApp, raw: bytes, secret: str = INBOUND_SECRET, **params: Any) -> Any:
    return await app.http.post(
        "/v1/inbound/email",
        content=raw,
        params=params,
        headers={"Authorization": f"Bearer {secret}", "Content-Type": "message/rfc822"},
    )


async def test_smtp_message_with_a_pdf_becomes_a_document_and_an_activity_item(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant], smtp_port: int
) -> None:
    alice, bob = tenants
    address = await address_of(wire_app, alice)
    assert address.endswith("@in.fincap.test") and address.startswith("r-")
    mail = message(
        to=f"Alice Inbox <{address}>",
        subject="Fwd: Northwind invoice",
        attachments=[
            ("northwind.pdf", "application/pdf", fixture("text-layer.pdf")),
            ("terms.txt", "text/plain", b"General terms and conditions"),
        ],
        message_id="<northwind-1@example.org>",
    )
    refused = await send(smtp_port, mail, address)
    assert refused == {}

    items = await wire_app.store.db["activity"].find({"workspaceId": alice.org_id}).to_list(None)
    assert len(items) == 1
    item = items[0]
    assert item["sourceType"] == "inbound-email" and item["status"] == "queued"
    details = item["details"]
    assert details["from"] == "carol@example.org" and details["subject"] == "Fwd: Northwind invoice"
    assert details["alias"] == address.split("@")[0] and details["via"] == "smtp"
    assert item["messageId"] == "<northwind-1@example.org>" and details["receivedAt"]
    assert address in details["to"]
    assert len(item["documentIds"]) == 1  # the text attachment is not a document

    assert await wire_app.workers().run_until_idle() >= 1
    doc = await document(wire_app.http, alice, item["documentIds"][0])
    assert doc["processingStatus"] == "processed", doc["processingReason"]
    assert doc["source"] == "inbound-email" and doc["merchant"] == "Northwind Consulting GmbH"
    assert doc["amount"] == 1190.0 and doc["fromEmail"] == "carol@example.org"
    settled = await wire_app.store.activity.get(alice.org_id, item["_id"])
    assert settled is not None and settled["status"] == "processed"
    assert "Northwind" in settled["reasoning"]
    # Nothing reached the other workspace.
    assert await wire_app.store.db["activity"].count_documents({"workspaceId": bob.org_id}) == 0

    # The same message delivered again (a relay retry) is not taken twice.
    assert await send(smtp_port, mail, address) == {}
    assert await wire_app.store.activity.count(alice.org_id) == 1


async def test_two_attachments_settle_one_activity_item(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant], smtp_port: int
) -> None:
    alice, _ = tenants
    address = await address_of(wire_app, alice)
    pdf = fixture("text-layer.pdf")
    mail = message(
        to=address,
        attachments=[("a.pdf", "application/pdf", pdf), ("scan.pdf", "application/pdf", pdf)],
    )
    await send(smtp_port, mail, address)
    item = await wire_app.store.db["activity"].find_one({"workspaceId": alice.org_id})
    assert item is not None and len(item["documentIds"]) == 2
    await wire_app.workers().run_until_idle()
    settled = await wire_app.store.activity.get(alice.org_id, item["_id"])
    assert settled is not None
    # The second copy is a duplicate of the first: the item says so for each file.
    assert settled["status"] == "warning", settled["reasoning"]
    assert (
        "a.pdf: processed" in settled["reasoning"] and "scan.pdf: warning" in settled["reasoning"]
    )


async def test_order_confirmation_in_the_body_is_processed_from_its_text(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    address = await address_of(wire_app, alice)
    mail = EmailMessage()
    mail["From"] = "orders@contoso-books.test"
    mail["To"] = address
    mail["Subject"] = "Your Contoso Books order CB-889120"
    mail["Message-ID"] = "<order-889120@contoso-books.test>"
    mail.set_content(ORDER_CONFIRMATION_HTML, subtype="html")
    response = await post_raw(wire_app, mail.as_bytes())
    assert response.status_code == 200, response.text
    accepted = response.json()["data"]["result"]["accepted"]
    assert len(accepted) == 1 and len(accepted[0]["documentIds"]) == 1
    await wire_app.workers().run_until_idle()
    doc = await document(wire_app.http, alice, accepted[0]["documentIds"][0])
    assert doc["processingStatus"] in {"processed", "warning"}, doc["processingReason"]
    assert doc["amount"] == 72.49 and doc["currency"] == "GBP"
    assert doc["file"]["mimeType"] == "text/plain"
    item = await wire_app.store.activity.get(alice.org_id, accepted[0]["activityId"])
    assert item is not None and item["details"]["via"] == "http"


async def test_a_message_with_nothing_financial_is_skipped_with_the_reason(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant], smtp_port: int
) -> None:
    alice, _ = tenants
    address = await address_of(wire_app, alice)
    before = await stored(wire_app.store)
    await send(smtp_port, message(to=address, subject="Lunch?", text="Lunch on Friday?"), address)
    after = await stored(wire_app.store)
    assert after == {**before, "activity": before["activity"] + 1}  # no document, no job
    item = await wire_app.store.db["activity"].find_one({"workspaceId": alice.org_id})
    assert item is not None and item["status"] == "skipped" and item["documentIds"] == []
    assert "no PDF or image attachment" in item["reasoning"]


async def test_refused_mail_leaves_nothing_stored(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant], smtp_port: int
) -> None:
    alice, _ = tenants
    address = await address_of(wire_app, alice)
    before = await stored(wire_app.store)
    pdf = fixture("text-layer.pdf")

    # Unknown alias: refused at RCPT TO (SMTP) and 404 (HTTP).
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        await send(smtp_port, message(to="r-nobody@in.fincap.test"), "r-nobody@in.fincap.test")
    assert refused.value.recipients["r-nobody@in.fincap.test"][0] == 550
    response = await post_raw(wire_app, message(to="r-nobody@in.fincap.test").as_bytes())
    assert response.status_code == 404 and "No workspace receives mail" in response.text

    # Malformed MIME: 550 5.6.0 and 400.
    with pytest.raises(smtplib.SMTPDataError) as broken:
        await send(smtp_port, malformed_multipart(address), address)
    assert broken.value.smtp_code == 550 and b"Malformed message" in broken.value.smtp_error
    response = await post_raw(wire_app, malformed_multipart(address))
    assert response.status_code == 400 and "StartBoundaryNotFoundDefect" in response.text
    no_sender = f"To: {address}\r\nSubject: x\r\n\r\nTotal 5.00 EUR\r\n".encode()
    response = await post_raw(wire_app, no_sender)
    assert response.status_code == 400 and "no sender" in response.text

    # An attachment over 10 MB, beside a good one: the whole message is refused.
    big = b"%PDF-1.4\n" + b"0" * (10 * 1024 * 1024 + 1)
    oversized = message(
        to=address,
        attachments=[("ok.pdf", "application/pdf", pdf), ("huge.pdf", "application/pdf", big)],
    )
    with pytest.raises(smtplib.SMTPDataError) as too_big:
        await send(smtp_port, oversized, address)
    assert too_big.value.smtp_code == 552
    response = await post_raw(wire_app, oversized.as_bytes())
    assert response.status_code == 413 and "huge.pdf" in response.text

    # Wrong or missing relay secret.
    response = await post_raw(wire_app, message(to=address).as_bytes(), secret="wrong")
    assert response.status_code == 401
    response = await wire_app.http.post("/v1/inbound/email", content=b"x")
    assert response.status_code == 401

    assert await stored(wire_app.store) == before


async def test_the_address_rotates_through_rest_and_graphql(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, bob = tenants
    first = await address_of(wire_app, alice)
    assert await address_of(wire_app, alice) == first  # stable until rotated
    assert await address_of(wire_app, bob) != first  # one per workspace
    rotated = await call(wire_app.http, alice, "workspaces.rotate-inbound-address", {})
    assert rotated["retiredAddress"] == first and rotated["address"] != first
    assert rotated["rotatedAt"] is not None
    # Mail to the retired address is refused; the new one receives.
    response = await post_raw(wire_app, message(to=first).as_bytes())
    assert response.status_code == 404
    response = await post_raw(wire_app, message(to=rotated["address"], text="hello").as_bytes())
    assert response.status_code == 200

    body = await gql(
        wire_app.http,
        "{ workspacesGetInboundAddress { address alias domain } }",
        headers=alice.headers(),
    )
    assert body["data"]["workspacesGetInboundAddress"]["address"] == rotated["address"]
    assert body["data"]["workspacesGetInboundAddress"]["domain"] == "in.fincap.test"
    body = await gql(
        wire_app.http,
        "mutation { workspacesRotateInboundAddress { address retiredAddress } }",
        headers=alice.headers(),
    )
    assert body["data"]["workspacesRotateInboundAddress"]["retiredAddress"] == rotated["address"]


async def test_http_inbound_is_off_without_a_secret(wire_store: Any, registry: Any) -> None:
    from tests.sources.conftest import open_source_app, source_settings

    async for opened in open_source_app(wire_store, registry, source_settings(inbound_secret=None)):
        response = await post_raw(opened, b"From: a@b.c\r\n\r\nx")
        assert response.status_code == 404


async def test_a_message_over_the_size_limit_is_refused_whole(
    wire_store: Any, registry: Any, tenants: tuple[Tenant, Tenant]
) -> None:
    from tests.sources.conftest import open_source_app, source_settings

    alice, _ = tenants
    async for app in open_source_app(wire_store, registry, source_settings(inbound_max_mb=1)):
        address = await address_of(app, alice)
        server = await start_smtp_server(app.services, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            before = await stored(app.store)
            # Two attachments of 0.6 MB each: each is fine, together over the 1 MB message.
            chunk = fixture("text-layer.pdf") + b"%" + b"0" * 600_000
            big = message(
                to=address,
                attachments=[
                    ("a.pdf", "application/pdf", chunk),
                    ("b.pdf", "application/pdf", chunk),
                ],
            )
            # smtplib announces the size (ESMTP SIZE) and aiosmtpd refuses at MAIL FROM.
            with pytest.raises(smtplib.SMTPSenderRefused) as refused:
                await send(port, big, address)
            assert refused.value.smtp_code == 552

            # Sent raw without SIZE, the receiver stops it during DATA.
            code = await asyncio.to_thread(send_without_size, port, address, big.as_bytes())
            assert code == 552
            response = await post_raw(app, big.as_bytes())
            assert response.status_code == 413 and "limit" in response.text
            assert await stored(app.store) == before
        finally:
            server.close()
            await server.wait_closed()
