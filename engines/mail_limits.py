"""What one e-mail may cost to read, checked before the parser sees it.

The standard library's parser does work that grows faster than the message: an address list of
40,000 entries took 12.9 s (quadratic), a Content-Type with thousands of parameters seconds,
20,000 tiny parts 3 s, and a structure nested 1,000 levels deep ends in a ``RecursionError``.
So ``check_structure`` reads the raw bytes once, line by line (no parsing beyond splitting a
header into name and value), and refuses a message before any of that can start:

- a header section (the message's, or any part's) over ``header_bytes``;
- more than ``recipients`` addresses in the address headers (From, To, Cc, Bcc, Reply-To,
  Delivered-To, …), counting what could be one (an ``@``, or a list element);
- a Content-Type or Content-Disposition with more than ``MAX_PARAMETERS`` parameters;
- more than ``parts`` MIME parts, or parts nested more than ``depth`` levels (a multipart
  inside a multipart, a forwarded message inside a part).

No database, no transport: the callers decide how a refusal is answered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What a message is allowed by default (the inbound settings can change the first three).
DEFAULT_HEADER_BYTES = 64 * 1024  # a message through several relays carries ~10-30 KB
DEFAULT_RECIPIENTS = 500
DEFAULT_ATTACHMENTS = 20
MAX_DEPTH = 20  # a forward of a forward of an HTML mail with images is ~6 levels
MAX_PARTS = 1000
MAX_PARAMETERS = 50  # real Content-Types carry a handful (charset, boundary, name, …)

ADDRESS_HEADERS = frozenset(
    {
        b"from",
        b"sender",
        b"reply-to",
        b"to",
        b"cc",
        b"bcc",
        b"resent-from",
        b"resent-sender",
        b"resent-to",
        b"resent-cc",
        b"resent-bcc",
        b"delivered-to",
        b"x-original-to",
        b"envelope-to",
    }
)
PARAMETER_HEADERS = frozenset({b"content-type", b"content-disposition"})
_BOUNDARY = re.compile(rb'boundary\s*=\s*(?:"([^"]*)"|([^\s;]+))', re.IGNORECASE)


class MessageRefused(ValueError):
    """The message cannot be accepted as a whole; the text says why (it becomes the SMTP reply
    and the HTTP error)."""


class OversizedHeader(MessageRefused):
    """A header section, or one header, is larger or more complex than reading may cost."""


class TooManyRecipients(MessageRefused):
    """The address headers name more addresses than are read."""


class TooComplex(MessageRefused):
    """Too many parts, or parts nested too deeply."""


@dataclass(frozen=True)
class MailLimits:
    """The bounds a message is checked against before it is parsed."""

    header_bytes: int = DEFAULT_HEADER_BYTES
    recipients: int = DEFAULT_RECIPIENTS
    attachments: int = DEFAULT_ATTACHMENTS  # documents taken from one message (the rest: listed)
    depth: int = MAX_DEPTH
    parts: int = MAX_PARTS


def check_structure(raw: bytes, limits: MailLimits) -> None:
    """Raise ``MessageRefused`` when ``raw`` is over one of ``limits`` (one pass, no parsing)."""
    scan = _Scan(limits)
    for line in raw.split(b"\n"):
        scan.line(line[:-1] if line.endswith(b"\r") else line)
    scan.end()


class _Scan:
    """The structure seen so far: inside a header section or a body, and the open multiparts
    (their boundaries; None for a message inside a part, whose headers follow its own)."""

    def __init__(self, limits: MailLimits) -> None:
        self.limits = limits
        self.in_header = True
        self.top = True
        self.block: list[bytes] = []
        self.block_bytes = 0
        self.open: list[bytes | None] = []
        self.parts = 0

    def line(self, line: bytes) -> None:
        if self.in_header:
            if line:
                self.block_bytes += len(line) + 2
                if self.block_bytes > self.limits.header_bytes:
                    where = "the message's header section" if self.top else "a part's headers"
                    raise OversizedHeader(
                        f"{where} is over {self.limits.header_bytes:,} bytes; at most "
                        f"{self.limits.header_bytes:,} are read"
                    )
                self.block.append(line)
            else:
                self._end_of_headers()
        elif line.startswith(b"--"):
            self._boundary(line.rstrip())

    def end(self) -> None:
        if self.in_header and self.block:
            self._end_of_headers()

    def _end_of_headers(self) -> None:
        headers = _unfold(self.block)
        self.block, self.block_bytes = [], 0
        if self.top:
            self.top = False
            _check_recipients(headers, self.limits.recipients)
        _check_parameters(headers)
        kind, boundary = _content_type(headers)
        if kind.startswith(b"multipart/") and boundary:
            self.open.append(boundary)
            self.in_header = False
        elif kind.startswith(b"message/") and kind != b"message/delivery-status":
            self.open.append(None)  # the enclosed message's own headers come next
        else:
            self.in_header = False
        if len(self.open) > self.limits.depth:
            raise TooComplex(
                f"its MIME parts are nested more than {self.limits.depth} levels deep; at most "
                f"{self.limits.depth} are read"
            )

    def _boundary(self, marker: bytes) -> None:
        for index in range(len(self.open) - 1, -1, -1):
            boundary = self.open[index]
            if boundary is None:
                continue
            if marker == b"--" + boundary + b"--":
                del self.open[index:]  # closes it, and whatever inside it was left open
                self.in_header = False
                return
            if marker == b"--" + boundary:
                del self.open[index + 1 :]
                self.parts += 1
                if self.parts > self.limits.parts:
                    raise TooComplex(
                        f"it has more than {self.limits.parts:,} MIME parts; at most "
                        f"{self.limits.parts:,} are read"
                    )
                self.block, self.block_bytes = [], 0
                self.in_header = True
                return


def _unfold(block: list[bytes]) -> list[tuple[bytes, bytes]]:
    """(lower-cased name, value) of each header of a section, continuation lines joined."""
    headers: list[tuple[bytes, bytes]] = []
    for line in block:
        if line[:1] in (b" ", b"\t") and headers:
            name, value = headers[-1]
            headers[-1] = (name, value + line)
            continue
        name, colon, value = line.partition(b":")
        if colon:
            headers.append((name.strip().lower(), value))
    return headers


def _check_recipients(headers: list[tuple[bytes, bytes]], limit: int) -> None:
    count = sum(
        max(value.count(b"@"), value.count(b",") + 1)
        for name, value in headers
        if name in ADDRESS_HEADERS
    )
    if count > limit:
        raise TooManyRecipients(
            f"its address headers (To, Cc, …) name {count:,} addresses; at most {limit:,} are read"
        )


def _check_parameters(headers: list[tuple[bytes, bytes]]) -> None:
    for name, value in headers:
        if name in PARAMETER_HEADERS and value.count(b";") > MAX_PARAMETERS:
            raise OversizedHeader(
                f"a {name.decode('ascii', 'replace').title()} header has "
                f"{value.count(b';'):,} parameters; at most {MAX_PARAMETERS} are read"
            )


def _content_type(headers: list[tuple[bytes, bytes]]) -> tuple[bytes, bytes | None]:
    """The type (lower-cased) and boundary of the section's last Content-Type header."""
    for name, value in reversed(headers):
        if name == b"content-type":
            kind = value.split(b";", 1)[0].strip().lower()
            found = _BOUNDARY.search(value)
            boundary = (found.group(1) or found.group(2)) if found else None
            return kind, boundary
    return b"text/plain", None


__all__ = [
    "MailLimits",
    "MessageRefused",
    "OversizedHeader",
    "TooComplex",
    "TooManyRecipients",
    "check_structure",
]
