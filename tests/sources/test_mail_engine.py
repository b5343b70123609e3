"""engines/mail.py and the activity outcome combination: parsing decisions without a server."""

from __future__ import annotations

from email.message import EmailMessage

import pytest

from engines.connectors.whatsapp import MalformedWebhook, parse_webhook, sign, signature_valid
from engines.mail import (
    MalformedMessage,
    OversizedAttachment,
    body_is_receipt,
    html_to_text,
    read_message,
)
from persistence.activity import combine_outcomes
from resolvers.services.processing.inbound_email import alias_of
from tests.sources.conftest import fixture
from tests.sources.fake_graph import document_message, webhook
from tests.sources.mail import ORDER_CONFIRMATION_HTML, malformed_multipart, message

PDF = fixture("text-layer.pdf")


def test_a_message_is_read_with_its_receipt_attachments_only() -> None:
    mail = message(
        to="Inbox <r-abc@in.test>",
        attachments=[
            ("invoice.pdf", "application/pdf", PDF),
            ("photo.png", "image/png", fixture("receipt.png")),
            ("fake.pdf", "application/pdf", b"not really a pdf"),
            ("calendar.ics", "text/calendar", b"BEGIN:VCALENDAR"),
        ],
        message_id="<m1@example.org>",
    )
    mail["Cc"] = "boss@example.org"
    read = read_message(mail.as_bytes())
    assert read.sender == "carol@example.org" and read.sender_name == "Carol Payer"
    assert read.recipients == ("r-abc@in.test", "boss@example.org")
    assert read.message_id == "<m1@example.org>" and read.subject == "Fwd: your invoice"
    assert [(a.file_name, a.mime_type) for a in read.attachments] == [
        ("invoice.pdf", "application/pdf"),
        ("photo.png", "image/png"),
    ]
    assert any("fake.pdf" in why for why in read.ignored)  # content checked, not the label
    assert any("calendar.ics" in why for why in read.ignored)
    assert read.snippet == "Please find the invoice attached."


def test_inline_logo_of_an_html_body_is_not_a_document() -> None:
    mail = EmailMessage()
    mail["From"] = "shop@contoso.test"
    mail["To"] = "r-abc@in.test"
    mail.set_content("Order total GBP 72.49")
    mail.add_alternative(ORDER_CONFIRMATION_HTML, subtype="html")
    html_part = mail.get_payload()[1]
    html_part.add_related(fixture("receipt.png"), "image", "png", cid="<logo@contoso>")
    assert read_message(mail.as_bytes()).attachments == ()


def test_html_becomes_lines_with_cells_side_by_side() -> None:
    text = html_to_text(ORDER_CONFIRMATION_HTML)
    assert "Total GBP 72.49" in text.splitlines()
    assert "td {padding" not in text  # style sheets are not text
    assert html_to_text("<p>a &amp; b</p><script>x()</script>") == "a & b"


@pytest.mark.parametrize(
    ("text", "financial"),
    [
        (html_to_text(ORDER_CONFIRMATION_HTML), True),
        ("Lunch on Friday?", False),
        ("", False),
    ],
)
def test_body_is_receipt(text: str, financial: bool) -> None:
    is_receipt, why = body_is_receipt(text)
    assert is_receipt is financial
    assert bool(why) is not financial


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"", "empty"),
        (b"   \r\n", "empty"),
        (malformed_multipart("r-abc@in.test"), "StartBoundaryNotFoundDefect"),
        (b"To: r-abc@in.test\r\nSubject: no sender\r\n\r\nhi", "no sender"),
        (b"From: not an address\r\nTo: r@in.test\r\n\r\nhi", "no sender"),
        (
            b"From: a@b.c\r\nTo: r@in.test\r\nMIME-Version: 1.0\r\n"
            b'Content-Type: multipart/mixed; boundary="B"\r\n\r\n--B\r\n'
            b"Content-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n"
            b'Content-Disposition: attachment; filename="x.pdf"\r\n\r\nJVBERi0x!!!@@@\r\n--B--\r\n',
            "Base64",
        ),
    ],
)
def test_malformed_messages_are_refused(raw: bytes, reason: str) -> None:
    with pytest.raises(MalformedMessage, match=reason):
        read_message(raw)


def test_an_attachment_over_the_limit_refuses_the_message() -> None:
    mail = message(to="r@in.test", attachments=[("big.pdf", "application/pdf", PDF)])
    with pytest.raises(OversizedAttachment, match=r"big\.pdf"):
        read_message(mail.as_bytes(), max_attachment_bytes=len(PDF) - 1)


def test_alias_of() -> None:
    assert alias_of("R-Abc+receipts@In.Test", "in.test") == "r-abc"
    assert alias_of("<r-abc@in.test>", "in.test") == "r-abc"
    assert alias_of("r-abc@other.test", "in.test") is None
    assert alias_of("no-at-sign", "in.test") is None


def test_outcomes_combine_into_one_status() -> None:
    assert combine_outcomes([("a", "processed", "ok")]) == ("processed", "ok")
    status, why = combine_outcomes([("a.pdf", "processed", "ok"), ("b.pdf", "failed", "bad")])
    assert status == "warning" and "a.pdf: processed" in why and "b.pdf: failed" in why
    assert combine_outcomes([("a", "skipped", "x"), ("b", "processed", "y")])[0] == "processed"
    assert combine_outcomes([("a", "skipped", "x"), ("b", "failed", "y")])[0] == "failed"
    assert combine_outcomes([("a", "skipped", "x"), ("b", "skipped", "y")])[0] == "skipped"


def test_webhook_signatures_and_payloads() -> None:
    body = b'{"object":"whatsapp_business_account","entry":[]}'
    assert signature_valid("secret", body, sign("secret", body))
    assert not signature_valid("secret", body, sign("other", body))
    assert not signature_valid("secret", body + b" ", sign("secret", body))
    assert not signature_valid("secret", body, None)
    assert not signature_valid("secret", body, "sha1=abc")
    found = parse_webhook(webhook([document_message("wamid.1", "+49 151", "m1", "x.pdf")]))
    assert found[0].sender == "49151" and found[0].media_id == "m1"
    assert found[0].mime_type == "application/pdf" and found[0].file_name == "x.pdf"
    assert found[0].phone_number_id == "109876543210"
    with pytest.raises(MalformedWebhook):
        parse_webhook({"object": "page"})
    with pytest.raises(MalformedWebhook):
        parse_webhook(webhook([{"type": "text"}]))
