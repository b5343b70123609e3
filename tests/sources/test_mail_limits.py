"""What reading one e-mail may cost (issue 25, items 6, 8 and 11): header sections, recipients,
parameters, parts and depth are bounded before the parser runs; the parse runs in a thread with
a time bound; a message brings at most a set number of documents. Both doors (SMTP, HTTP) and
the mailbox poller refuse with a reply that says why, and store nothing."""

from __future__ import annotations

import asyncio
import smtplib
import threading
from typing import Any

import pytest

from engines.mail import read_message
from engines.mail_limits import (
    MailLimits,
    OversizedHeader,
    TooComplex,
    TooManyRecipients,
    check_structure,
)
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.processing import inbound_email
from tests.conftest import Tenant
from tests.hardening.bombs import many_recipients_mail, nested_mail, png_bomb
from tests.requires import requires
from tests.sources import test_inbound_email, test_mailboxes
from tests.sources.conftest import (
    SourceApp,
    call,
    fixture,
    open_source_app,
    source_settings,
    stored,
)
from tests.sources.dovecot import Imap
from tests.sources.mail import message
from tests.sources.test_inbound_email import address_of, post_raw
from tests.sources.test_mailboxes import USER, connect_body

# Fixtures of the modules next door: the SMTP receiver, and a Dovecot for the poller's test.
smtp_port = test_inbound_email.smtp_port
imap = test_mailboxes.imap


# The engine: refusals before parsing --------------------------------------------------------


def test_forty_thousand_recipients_are_refused_before_parsing() -> None:
    # 40,000 addresses fill far more than a header section may hold.
    with pytest.raises(OversizedHeader, match="header section is over 65,536 bytes"):
        read_message(many_recipients_mail("r-abc@in.fincap.test", 40_000))
    # Counted, where the header section may be that large.
    roomy = MailLimits(header_bytes=2 * 1024 * 1024)
    with pytest.raises(TooManyRecipients, match=r"name 40,002 addresses; at most 500"):
        read_message(many_recipients_mail("r-abc@in.fincap.test", 40_000), limits=roomy)
    with pytest.raises(TooManyRecipients, match=r"name 2,002 addresses; at most 500"):
        read_message(many_recipients_mail("r-abc@in.fincap.test", 2000))
    # Up to the limit it is read (with the sender and the workspace, 500 addresses).
    assert len(read_message(many_recipients_mail("r@in.fincap.test", 498)).recipients) == 499


def test_a_header_section_over_the_limit_is_refused() -> None:
    raw = b"From: a@example.org\r\nX-Filler: " + b"x" * 70_000 + b"\r\n\r\nbody\r\n"
    with pytest.raises(OversizedHeader, match="header section is over 65,536 bytes"):
        read_message(raw)
    part = (
        b"From: a@example.org\r\nContent-Type: multipart/mixed; boundary=B\r\n\r\n--B\r\n"
        b"X-Filler: " + b"x" * 10_000 + b"\r\n\r\nhi\r\n--B--\r\n"
    )
    with pytest.raises(OversizedHeader, match="a part's headers"):
        check_structure(part, MailLimits(header_bytes=8 * 1024))


def test_thousands_of_parameters_are_refused() -> None:
    params = ";\r\n ".join(f"p{n}=v{n}" for n in range(2000))
    raw = f"From: a@example.org\r\nContent-Type: text/plain; {params}\r\n\r\nx\r\n".encode()
    with pytest.raises(OversizedHeader, match="Content-Type header has 2,000 parameters"):
        read_message(raw)


@pytest.mark.parametrize("forwarded", [False, True])
def test_parts_nested_a_thousand_levels_are_refused(forwarded: bool) -> None:
    with pytest.raises(TooComplex, match="nested more than 20 levels"):
        read_message(nested_mail("r@in.fincap.test", 1000, forwarded=forwarded))
    # Ordinary nesting (a forward of an HTML mail with images) is read.
    read = read_message(nested_mail("r@in.fincap.test", 6, forwarded=forwarded))
    assert read.sender == "mallory@example.com"


def test_too_many_parts_are_refused() -> None:
    parts = "".join("--B\r\nContent-Type: text/plain\r\n\r\nx\r\n" for _ in range(1500))
    raw = (
        "From: a@example.org\r\nMIME-Version: 1.0\r\n"
        f"Content-Type: multipart/mixed; boundary=B\r\n\r\n{parts}--B--\r\n"
    ).encode()
    with pytest.raises(TooComplex, match="more than 1,000 MIME parts"):
        read_message(raw)


def test_a_message_brings_at_most_its_number_of_documents() -> None:
    pdf = fixture("text-layer.pdf")
    mail = message(
        to="r@in.fincap.test",
        attachments=[(f"inv{n}.pdf", "application/pdf", pdf) for n in range(25)],
    )
    read = read_message(mail.as_bytes(), limits=MailLimits(attachments=20))
    assert [a.file_name for a in read.attachments] == [f"inv{n}.pdf" for n in range(20)]
    assert read.ignored == (
        "5 more attachments not read: a message brings at most 20 documents "
        "(inv20.pdf, inv21.pdf, inv22.pdf, inv23.pdf, inv24.pdf)",
    )


# The doors ----------------------------------------------------------------------------------


def smtp_data(port: int, rcpts: list[str], data: bytes) -> tuple[int, bytes, dict[str, Any]]:
    """DATA's reply (code, text) and the recipients refused at RCPT (in a thread: the receiver
    shares the test's loop)."""
    with smtplib.SMTP("127.0.0.1", port, timeout=60) as client:
        client.ehlo()
        client.mail("mallory@example.com")
        refused = {}
        for rcpt in rcpts:
            code, text = client.rcpt(rcpt)
            if code >= 400:
                refused[rcpt] = (code, text)
        code, text = client.data(data)
        return code, text, refused


def padded(to: str) -> bytes:
    """A message with 100 KB of one header, folded into lines SMTP accepts."""
    pad = "\r\n ".join(["y" * 76] * 1300)
    return f"From: a@example.org\r\nTo: {to}\r\nX-Pad: {pad}\r\n\r\nhi\r\n".encode()


CASES = [
    ("40,000 To addresses", lambda to: many_recipients_mail(to, 40_000), 552, b"5.3.4", 413),
    ("2,000 To addresses", lambda to: many_recipients_mail(to, 2000), 550, b"5.5.3", 400),
    ("MIME nested 1,000 levels", lambda to: nested_mail(to, 1000), 550, b"5.6.0", 400),
    ("a 100 KB header section", padded, 552, b"5.3.4", 413),
]


@pytest.mark.wire
@pytest.mark.parametrize(("case", "build", "smtp", "enhanced", "http"), CASES)
async def test_both_doors_refuse_what_costs_too_much_and_store_nothing(
    wire_app: SourceApp,
    tenants: tuple[Tenant, Tenant],
    smtp_port: int,
    case: str,
    build: Any,
    smtp: int,
    enhanced: bytes,
    http: int,
) -> None:
    alice, _ = tenants
    address = await address_of(wire_app, alice)
    before = await stored(wire_app.store)
    code, text, _ = await asyncio.to_thread(smtp_data, smtp_port, [address], build(address))
    assert (code, text[:5]) == (smtp, enhanced), text
    assert b"Message refused:" in text
    answer = await post_raw(wire_app, build(address))
    assert answer.status_code == http, answer.text
    assert answer.json()["error"]["errorMessage"].startswith("Message refused:")
    assert await stored(wire_app.store) == before


@pytest.mark.wire
async def test_envelope_recipients_beyond_the_limit_wait_for_another_transaction(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant], smtp_port: int
) -> None:
    alice, _ = tenants
    address = await address_of(wire_app, alice)
    limits = wire_app.services.sources.mail_limits
    rcpts = [address] * limits.recipients + [address.replace("@", "+more@")]
    mail = message(
        to=address, attachments=[("a.pdf", "application/pdf", fixture("text-layer.pdf"))]
    )
    data = mail.as_bytes().replace(b"\n", b"\r\n")  # SMTP's line ends
    code, text, refused = await asyncio.to_thread(smtp_data, smtp_port, rcpts, data)
    assert code == 250, text
    assert [value[0] for value in refused.values()] == [452]
    many = await post_raw(wire_app, mail.as_bytes(), to=[address] * (limits.recipients + 1))
    assert many.status_code == 400 and "envelope names 501 recipients" in many.text


@pytest.mark.wire
async def test_the_message_is_read_off_the_event_loop_within_a_time_bound(
    wire_app: SourceApp, tenants: tuple[Tenant, Tenant], monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, _ = tenants
    address = await address_of(wire_app, alice)
    loop_thread = threading.current_thread()
    read_in: list[threading.Thread] = []
    release = threading.Event()

    def slow_read(raw: bytes, **options: Any) -> Any:
        read_in.append(threading.current_thread())
        release.wait(timeout=30)  # a parse that does not end by itself
        return read_message(raw, **options)

    monkeypatch.setattr(inbound_email, "parse_message", slow_read)
    monkeypatch.setattr(inbound_email, "READ_TIMEOUT_S", 0.2)
    before = await stored(wire_app.store)
    try:
        answer = await post_raw(wire_app, message(to=address).as_bytes())
    finally:
        release.set()
    assert read_in and read_in[0] is not loop_thread
    assert answer.status_code == 413
    assert "reading it took longer than 0 s; it is too complex" in answer.text
    assert await stored(wire_app.store) == before


@pytest.mark.wire
async def test_attachments_beyond_the_limit_are_listed_on_the_activity_item(
    wire_store: Store, registry: Registry, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    settings = source_settings(inbound_max_attachments=3)
    async for app in open_source_app(wire_store, registry, settings):
        address = await address_of(app, alice)
        pdf = fixture("text-layer.pdf")
        mail = message(
            to=address,
            attachments=[(f"inv{n}.pdf", "application/pdf", pdf) for n in range(500)],
        )
        answer = await post_raw(app, mail.as_bytes())
        assert answer.status_code == 200, answer.text
        accepted = answer.json()["data"]["result"]["accepted"][0]
        assert len(accepted["documentIds"]) == 3  # 3 jobs, not 500
        assert await wire_store.db["jobs"].count_documents({}) == 3
        item = await wire_store.activity.get(alice.org_id, accepted["activityId"])
        assert item is not None
        [note] = item["details"]["ignored"]
        assert note == (
            "497 more attachments not read: a message brings at most 3 documents (inv3.pdf, "
            "inv4.pdf, inv5.pdf, inv6.pdf, inv7.pdf, inv8.pdf, inv9.pdf, inv10.pdf, inv11.pdf, "
            "inv12.pdf and 487 more)"
        )
        await app.workers().run_until_idle()
        settled = await wire_store.activity.get(alice.org_id, accepted["activityId"])
        assert settled is not None and f"Not read: {note}." in settled["reasoning"]


@pytest.mark.wire
@requires("dovecot")
async def test_the_mailbox_poller_records_a_refused_message_and_goes_on(
    wire_app: SourceApp, imap: Imap, tenants: tuple[Tenant, Tenant]
) -> None:
    alice, _ = tenants
    imap.append(USER, many_recipients_mail(USER, 40_000))
    imap.append(USER, nested_mail(USER, 1000))
    imap.append(
        USER,
        message(
            to=USER,
            attachments=[("n.pdf", "application/pdf", fixture("text-layer.pdf"))],
            message_id="<after@northwind.test>",
        ),
    )
    mailbox = await call(wire_app.http, alice, "mailboxes.connect", connect_body(imap))
    polled = await call(wire_app.http, alice, "mailboxes.poll", {"id": mailbox["id"]})
    assert polled["imported"] == 3 and polled["mailbox"]["status"] == "active"
    items = await wire_app.store.db["activity"].find({"workspaceId": alice.org_id}).to_list(None)
    failed = sorted(i["reasoning"] for i in items if i["status"] == "failed")
    assert len(failed) == 2 and all("could not be taken: " in reason for reason in failed)
    assert any("nested more than 20 levels" in reason for reason in failed)
    assert any("header section is over 65,536 bytes" in reason for reason in failed)
    assert any(i.get("messageId") == "<after@northwind.test>" for i in items)


def test_an_image_bomb_attachment_is_left_out_with_the_reason() -> None:
    mail = message(
        to="r@in.fincap.test",
        attachments=[
            ("bomb.png", "image/png", png_bomb(13000)),
            ("n.pdf", "application/pdf", fixture("text-layer.pdf")),
        ],
    )
    read = read_message(mail.as_bytes())
    assert [a.file_name for a in read.attachments] == ["n.pdf"]
    assert read.ignored == (
        "bomb.png: the image is 13000 × 13000 pixels (169 million); at most 50 million are read",
    )
