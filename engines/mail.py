"""Reading one email (RFC 5322 / MIME) for the pipeline: who sent it, to whom, what it says, and
which of its parts are receipts.

The stdlib ``email`` package with ``policy.default`` parses (it is lenient and records what it
had to guess as *defects*); this module decides what is too broken to accept: a message without
a sender, without a header/body separator, or whose multipart structure or an attachment's
encoding is damaged is ``MalformedMessage``: half a message must not become half a document.
Before the parser runs, ``engines.mail_limits`` bounds what reading may cost (header sizes,
recipients, parts, depth); a message brings at most ``limits.attachments`` documents, and the
attachments after those are listed as left out. Parsing is CPU work: callers run ``read_message``
off the event loop. No database, no transport.
"""

from __future__ import annotations

import email
import re
from dataclasses import dataclass, field
from datetime import datetime
from email import errors as mail_errors
from email import policy
from email.message import EmailMessage
from email.utils import getaddresses, parsedate_to_datetime
from html.parser import HTMLParser

from domain.uploads import MAX_UPLOAD_BYTES, UPLOAD_MIME_TYPES
from engines.extraction import OverBudget, check_image_bytes, parse_fields
from engines.mail_limits import MailLimits, MessageRefused, TooComplex, check_structure
from engines.sniff import sniff_mime

# The types files.upload accepts; anything else attached (a .docx, a calendar invite) is ignored.
RECEIPT_TYPES = UPLOAD_MIME_TYPES
MAX_ATTACHMENT_BYTES = MAX_UPLOAD_BYTES  # files.upload's limit, per attachment
SNIPPET_CHARS = 200
# Damage that means parts are missing or cut: the message is refused rather than half-read.
FATAL_DEFECTS: tuple[type[mail_errors.MessageDefect], ...] = (
    mail_errors.StartBoundaryNotFoundDefect,
    mail_errors.CloseBoundaryNotFoundDefect,
    mail_errors.NoBoundaryInMultipartDefect,
    mail_errors.MultipartInvariantViolationDefect,
    mail_errors.MissingHeaderBodySeparatorDefect,
    mail_errors.InvalidBase64CharactersDefect,
    mail_errors.InvalidBase64PaddingDefect,
    mail_errors.InvalidBase64LengthDefect,
)


class MalformedMessage(MessageRefused):
    """The message cannot be read as a whole; the text says why (it becomes the SMTP/HTTP
    error)."""


class OversizedAttachment(MessageRefused):
    """An attachment exceeds the per-file limit; nothing of the message is accepted."""


@dataclass(frozen=True)
class MailAttachment:
    """A part that is a receipt candidate: an accepted type, verified from its content."""

    file_name: str
    mime_type: str
    data: bytes


@dataclass(frozen=True)
class ReadMessage:
    """What the pipeline needs from one email."""

    message_id: str
    sender: str  # the From address
    sender_name: str
    recipients: tuple[str, ...]  # To, Cc and delivery headers, lower-cased addresses
    subject: str
    sent_at: datetime | None
    text: str  # the body as plain text (HTML converted)
    attachments: tuple[MailAttachment, ...]
    ignored: tuple[str, ...] = field(default=())  # parts left out, each with the reason

    @property
    def snippet(self) -> str:
        return " ".join(self.text.split())[:SNIPPET_CHARS]


def read_message(
    raw: bytes,
    *,
    max_attachment_bytes: int = MAX_ATTACHMENT_BYTES,
    limits: MailLimits | None = None,
) -> ReadMessage:
    """Parse ``raw`` (one RFC 5322 message) within ``limits``; ``MessageRefused`` (malformed,
    an attachment or a header too large, too many recipients or parts) when it cannot be
    accepted whole."""
    limits = limits or MailLimits()
    if not raw.strip():
        raise MalformedMessage("the message is empty")
    head = raw[:65536]
    if b"\n\n" not in head.replace(b"\r\n", b"\n") and b":" not in head.split(b"\n", 1)[0]:
        raise MalformedMessage("the message has no header section")
    check_structure(raw, limits)
    try:
        return _read(raw, max_attachment_bytes, limits)
    except RecursionError:
        # Nesting the scan did not see (an unusual boundary notation) still ends here.
        raise TooComplex("its MIME parts are nested too deeply to be read") from None


def _read(raw: bytes, max_attachment_bytes: int, limits: MailLimits) -> ReadMessage:
    message = email.message_from_bytes(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    _check_defects(message)
    try:
        sender_name, sender = _first_address(message, "from")
    except (ValueError, IndexError, TypeError) as exc:
        raise MalformedMessage(f"the From header cannot be read ({exc})") from None
    if not sender or "@" not in sender:
        raise MalformedMessage("the message has no sender address (From)")
    recipients: list[str] = []
    for name in ("to", "cc", "delivered-to", "x-original-to", "envelope-to"):
        for value in message.get_all(name, []) or []:
            try:
                recipients += [addr.lower() for _, addr in getaddresses([str(value)]) if addr]
            except (ValueError, IndexError, TypeError):
                continue
    attachments, ignored = _attachments(message, max_attachment_bytes, limits.attachments)
    message_id = str(message.get("message-id", "") or "").strip()
    return ReadMessage(
        message_id=message_id,
        sender=sender.lower(),
        sender_name=sender_name,
        recipients=tuple(dict.fromkeys(recipients)),
        subject=_header_text(message, "subject"),
        sent_at=_date(message),
        text=body_text(message),
        attachments=tuple(attachments),
        ignored=tuple(ignored),
    )


def _check_defects(message: EmailMessage) -> None:
    for part in message.walk():
        for defect in getattr(part, "defects", []):
            if isinstance(defect, FATAL_DEFECTS):
                raise MalformedMessage(
                    f"the MIME structure is damaged: {type(defect).__name__}"
                    + (f" ({defect})" if str(defect) else "")
                )


def _header_text(message: EmailMessage, name: str) -> str:
    try:
        return " ".join(str(message.get(name, "") or "").split())
    except (ValueError, IndexError, TypeError):
        return ""


def _first_address(message: EmailMessage, name: str) -> tuple[str, str]:
    value = message.get(name)
    if value is None:
        return "", ""
    found = getaddresses([str(value)])
    return found[0] if found else ("", "")


def _date(message: EmailMessage) -> datetime | None:
    value = message.get("date")
    if value is None:
        return None
    try:
        return parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None


def _attachments(
    message: EmailMessage, limit: int, most: int
) -> tuple[list[MailAttachment], list[str]]:
    """The receipt candidates (at most ``most``) and what was left out, each with the reason."""
    found: list[MailAttachment] = []
    ignored: list[str] = []
    beyond: list[str] = []  # candidates after the first ``most``: named, not read
    for number, part in enumerate(message.walk()):
        container = part.is_multipart() or part.get_content_maintype() in {"text", "message"}
        if container and not part.is_attachment():
            continue
        name = part.get_filename() or ""
        declared = part.get_content_type()
        inline_body_image = (
            not part.is_attachment() and part.get("content-id") is not None and not name
        )
        if inline_body_image:
            continue  # a logo or picture of an HTML body, not a document
        if not part.is_attachment() and declared not in RECEIPT_TYPES:
            continue
        if len(found) >= most:
            beyond.append(name or f"part {number}")
            continue
        try:
            payload = part.get_payload(decode=True)
        except (ValueError, TypeError) as exc:
            raise MalformedMessage(
                f"attachment {name or number} cannot be decoded ({exc})"
            ) from None
        data = payload if isinstance(payload, bytes) else b""
        # Decoding is what finds a damaged base64 body (it records defects on the part).
        for defect in getattr(part, "defects", []):
            if isinstance(defect, FATAL_DEFECTS):
                raise MalformedMessage(
                    f"attachment {name or number} is damaged: {type(defect).__name__}"
                )
        label = name or f"part {number}"
        if len(data) > limit:
            raise OversizedAttachment(
                f"attachment {label} is {len(data):,} bytes; the limit is {limit:,} bytes"
            )
        actual = sniff_mime(data) if data else None
        if actual not in RECEIPT_TYPES:
            ignored.append(
                f"{label} ({declared}) is not a PDF or an image"
                + (f"; its content is {actual}" if actual and actual != declared else "")
            )
            continue
        try:
            check_image_bytes(data)  # an image bomb is left out, as files.upload refuses it
        except OverBudget as exc:
            ignored.append(f"{label}: {exc}")
            continue
        found.append(
            MailAttachment(name or f"attachment-{number}{_extension(actual)}", actual, data)
        )
    if beyond:
        ignored.append(left_out(beyond, most))
    return found, ignored


def left_out(names: list[str], most: int, shown: int = 10) -> str:
    """One line for the attachments not read because a message brings at most ``most``."""
    listed = ", ".join(names[:shown]) + (
        f" and {len(names) - shown:,} more" if len(names) > shown else ""
    )
    return (
        f"{len(names):,} more attachment{'s' if len(names) != 1 else ''} not read: a message "
        f"brings at most {most} documents ({listed})"
    )


def _extension(mime: str | None) -> str:
    return {"application/pdf": ".pdf", "image/jpeg": ".jpg", "image/png": ".png"}.get(
        mime or "", ""
    )


def body_text(message: EmailMessage) -> str:
    """The body as plain text: the text/plain alternative, else the HTML one converted."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError):  # unknown charset, broken encoding
        payload = part.get_payload(decode=True)
        content = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
    if not isinstance(content, str):
        return ""
    if part.get_content_subtype() == "html":
        return html_to_text(content)
    return content.replace("\r\n", "\n")


class _TextOfHtml(HTMLParser):
    BLOCKS = frozenset(
        {"p", "div", "br", "tr", "li", "table", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "section"}
    )
    CELLS = frozenset({"td", "th"})
    HIDDEN = frozenset({"script", "style", "head", "title"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self._hidden += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")
        elif tag in self.CELLS:
            self.parts.append("   ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self._hidden = max(0, self._hidden - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Visible text of an HTML body, one line per block or table row (cells side by side, as
    a receipt's label and amount)."""
    parser = _TextOfHtml()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line)


_MONEY = re.compile(r"\d[\d.,' ]*[.,]\d{2}\b")


def body_is_receipt(text: str) -> tuple[bool, str]:
    """Whether a message's text is itself a receipt (an order confirmation), with the reason
    when it is not. The same field parser as documents decides; a text without any amount is
    not parsed at all."""
    if not text.strip():
        return False, "The message has no attachment and no text"
    if not _MONEY.search(text):
        return False, "The message has no PDF or image attachment and its text shows no amount"
    parsed = parse_fields(text[:20000])
    if not parsed.financial:
        return False, (
            "The message has no PDF or image attachment and its text is not a receipt"
            + (f": {parsed.skip_reason}" if parsed.skip_reason else "")
        )
    return True, ""
