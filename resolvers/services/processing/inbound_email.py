"""Inbound email: a message sent to a workspace's alias becomes an activity item and documents.

Both doors, the SMTP receiver (``app/inbound/smtp.py``) and ``POST /v1/inbound/email``
(``app/inbound/webhooks.py``), call ``accept_email``. Everything is checked before anything is
stored: an unknown alias, a message over the size limit, a malformed one, an attachment over 10 MB,
or a message over what reading may cost (``engines.mail_limits``: header sizes, recipients, parts,
depth) is ``InboundRejected`` (with its SMTP reply and HTTP status) and leaves no trace. Parsing
runs in a thread, never on the event loop, and is given ``READ_TIMEOUT_S`` (``read_off_loop``, also
used by connected mailboxes). An accepted message is one ``inbound-email`` activity item; each PDF
or image attachment is a document through the same pipeline as files.upload; without one, a body
that reads as a receipt (an order confirmation) is processed from its text, and anything else is
``skipped`` with the reason.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engines.mail import MalformedMessage, OversizedAttachment, ReadMessage, body_is_receipt
from engines.mail import read_message as parse_message
from engines.mail_limits import (
    MessageRefused,
    OversizedHeader,
    TooComplex,
    TooManyRecipients,
)
from persistence.ids import utcnow
from resolvers.services.processing.intake import IntakeBusy, IntakeDuplicate
from resolvers.services.processing.pipeline import Original, receive_item

if TYPE_CHECKING:
    from resolvers.framework.services import Services

SOURCE = "inbound-email"
# Reading one message, bounded as it is, takes well under a second; past this the sender is
# answered (refused) rather than kept waiting. (A thread cannot be stopped: the bounds are what
# keep its work small.)
READ_TIMEOUT_S = 20.0


class InboundRejected(Exception):
    """The message is refused as a whole; nothing was stored."""

    def __init__(self, smtp_code: str, http_status: int, message: str) -> None:
        super().__init__(message)
        self.smtp_code = smtp_code  # e.g. "550 5.1.1"
        self.http_status = http_status
        self.message = message


class ReadTooLong(MessageRefused):
    """Reading the message took longer than ``READ_TIMEOUT_S``."""


async def read_off_loop(services: Services, raw: bytes) -> ReadMessage:
    """``raw`` parsed in a thread, within the configured limits and ``READ_TIMEOUT_S``;
    ``MessageRefused`` when it cannot be accepted whole."""
    limits = services.sources.mail_limits
    try:
        return await asyncio.wait_for(
            asyncio.to_thread(parse_message, raw, limits=limits), timeout=READ_TIMEOUT_S
        )
    except TimeoutError:
        raise ReadTooLong(
            f"reading it took longer than {READ_TIMEOUT_S:.0f} s; it is too complex"
        ) from None


def rejection(exc: MessageRefused) -> InboundRejected:
    """The SMTP reply and HTTP status that say why a message is refused."""
    if isinstance(exc, OversizedAttachment | OversizedHeader | ReadTooLong):
        return InboundRejected("552 5.3.4", 413, f"Message refused: {exc}")
    if isinstance(exc, TooManyRecipients):
        return InboundRejected("550 5.5.3", 400, f"Message refused: {exc}")
    if isinstance(exc, TooComplex):
        return InboundRejected("550 5.6.0", 400, f"Message refused: {exc}")
    if isinstance(exc, MalformedMessage):
        return InboundRejected("550 5.6.0", 400, f"Malformed message: {exc}")
    return InboundRejected("550 5.6.0", 400, f"Message refused: {exc}")


@dataclass(frozen=True)
class Delivered:
    """What became of a message in one workspace."""

    workspace_id: str
    activity_id: str
    status: str
    document_ids: tuple[str, ...]
    duplicate: bool = False


def alias_of(address: str, domain: str) -> str | None:
    """The alias of ``address`` when it is at the receiving domain (``+tags`` ignored)."""
    local, at, host = address.strip().strip("<>").rpartition("@")
    if not at or host.lower().rstrip(".") != domain.lower() or not local:
        return None
    return local.split("+", 1)[0].lower()


async def workspace_for(services: Services, address: str) -> tuple[str, str] | None:
    """(workspace id, alias) receiving at ``address``, or None."""
    alias = alias_of(address, services.sources.inbound_domain)
    if alias is None:
        return None
    workspace_id = await services.store.inbound_addresses.workspace_of(alias)
    return (workspace_id, alias) if workspace_id else None


async def accept_email(
    services: Services,
    raw: bytes,
    envelope_recipients: Sequence[str] = (),
    *,
    via: str,
    request_id: str = "",
) -> list[Delivered]:
    """Take one raw RFC 5322 message for the workspaces it is addressed to."""
    limit = services.sources.inbound_max_bytes
    if len(raw) > limit:
        raise InboundRejected(
            "552 5.3.4", 413, f"The message is {len(raw):,} bytes; the limit is {limit:,} bytes"
        )
    most = services.sources.mail_limits.recipients
    if len(envelope_recipients) > most:
        raise rejection(
            TooManyRecipients(
                f"its envelope names {len(envelope_recipients):,} recipients; at most "
                f"{most:,} are read"
            )
        )
    try:
        message = await read_off_loop(services, raw)
    except MessageRefused as exc:
        raise rejection(exc) from None
    addresses = list(envelope_recipients) or list(message.recipients)
    targets: dict[str, tuple[str, str]] = {}
    for address in addresses:
        found = await workspace_for(services, address)
        if found is not None:
            targets.setdefault(found[0], (found[1], address.strip("<>").lower()))
    if not targets:
        raise InboundRejected(
            "550 5.1.1",
            404,
            "No workspace receives mail at "
            + (", ".join(addresses[:5]) if addresses else "any address of this message"),
        )
    receipt_text = None
    if not message.attachments:
        is_receipt, why = await asyncio.to_thread(body_is_receipt, message.text)
        receipt_text = None if not is_receipt else message.text
        skip_reason = why
    else:
        skip_reason = ""
    delivered = []
    for workspace_id, (alias, address) in targets.items():
        delivered.append(
            await deliver(
                services,
                workspace_id,
                message,
                raw,
                source=SOURCE,
                receipt_text=receipt_text,
                skip_reason=skip_reason,
                details={"alias": alias, "address": address, "via": via},
                request_id=request_id,
            )
        )
    return delivered


def message_key(message: ReadMessage, raw: bytes) -> str:
    """The message's Message-ID, or a digest of its bytes when it has none."""
    return message.message_id or f"<sha256-{hashlib.sha256(raw).hexdigest()}@fincap>"


async def deliver(
    services: Services,
    workspace_id: str,
    message: ReadMessage,
    raw: bytes,
    *,
    source: str,
    receipt_text: str | None,
    skip_reason: str,
    details: dict[str, Any],
    request_id: str = "",
) -> Delivered:
    """One parsed message into one workspace: its activity item, and its documents queued.

    A message id already in the workspace's activity for this source, or on its way in, is not
    taken twice (a relay's retry, a sender's retry after no answer, a mailbox read again): the
    earlier item is answered. While another process is taking the same message in, the answer
    is a temporary refusal (``451 4.3.0`` / 503): the sender tries again."""
    store = services.store
    key = message_key(message, raw)
    earlier = await store.activity.find_by_message_ids(workspace_id, source, [key])
    if earlier:
        return _duplicate(workspace_id, earlier[0])
    recipients = list(message.recipients)
    all_details = {
        "from": message.sender,
        "fromName": message.sender_name,
        "to": recipients,
        "subject": message.subject,
        "messageId": key,
        "sentAt": message.sent_at,
        "receivedAt": utcnow(),
        "snippet": message.snippet,
        "ignored": list(message.ignored),
        **details,
    }
    known = {
        "fromEmail": message.sender,
        "toEmail": details.get("address") or (recipients[0] if recipients else None),
    }
    originals = [Original(a.data, a.file_name, a.mime_type, known) for a in message.attachments]
    if not originals and receipt_text is not None:
        originals = [Original(receipt_text.encode("utf-8"), "message.txt", "text/plain", known)]
    status, reason = "queued", "Received; waiting for processing"
    if not originals:
        status, reason = "skipped", skip_reason or "Nothing financial in this message"
        if message.ignored:
            reason += " (left out: " + "; ".join(message.ignored) + ")"
    try:
        activity_id, document_ids = await receive_item(
            services,
            workspace_id,
            source=source,
            originals=originals,
            details=all_details,
            message_id=key,
            request_id=request_id,
            status=status,
            reasoning=reason,
        )
    except IntakeDuplicate as duplicate:
        return _duplicate(workspace_id, duplicate.item)
    except IntakeBusy as busy:
        raise InboundRejected("451 4.3.0", 503, f"Try again later: {busy}") from None
    return Delivered(workspace_id, activity_id, status, tuple(document_ids))


def _duplicate(workspace_id: str, item: dict[str, Any]) -> Delivered:
    return Delivered(
        workspace_id,
        item["_id"],
        item.get("status", "queued"),
        tuple(item.get("documentIds") or ()),
        duplicate=True,
    )
