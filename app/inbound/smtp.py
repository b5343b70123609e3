"""The SMTP receiver inside ``fincap serve`` (aiosmtpd), off unless
``FINCAP_INBOUND_SMTP_PORT`` is set.

aiosmtpd is the maintained asyncio SMTP server (the stdlib's ``smtpd`` is gone since Python
3.12); it runs on the service's own event loop, so a message is handed to
``resolvers.services.processing.inbound_email.accept_email`` with no thread in between. Unknown
recipients are refused at ``RCPT TO`` (550 5.1.1), recipients beyond the limit too (452 4.5.3: the
sender tries them again in another transaction), a message over the size limit at ``DATA`` by
aiosmtpd itself (552), and the rest by ``accept_email``'s rejection, whose SMTP reply says why. Any
failure at any stage (the store unreachable, a write failing) is a temporary ``451 4.3.0``
(``handle_exception``): the sender keeps the message and tries again; ``MAIL FROM`` answers it
at once while the store is known to be away, and ``452 4.3.1`` while its disk is too full to
take the message (``resolvers.services.processing.disk_space``; at ``DATA`` too). The
message is parsed in a thread (``read_off_loop``): the event loop this receiver shares with the
API never waits for it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from aiosmtpd.smtp import SMTP, Envelope, Session

from resolvers.framework.errors import (
    InsufficientStorage,
    ServiceUnavailable,
    capability_error_of,
)
from resolvers.framework.services import Services
from resolvers.services.processing.inbound_email import InboundRejected, accept_email, workspace_for

log = logging.getLogger("fincap.smtp")

# RFC 3463 4.3.0: a temporary failure of the mail system; the sender keeps the message and
# tries again (a 5xx would bounce the user's receipt).
TEMPORARY_FAILURE = "451 4.3.0 Temporary failure; please try again later"
# RFC 3463 4.3.1: mail system full; also temporary.
NO_ROOM = "452 4.3.1 Insufficient system storage; please try again later"


class InboundHandler:
    """aiosmtpd handler: recipients are checked one by one, the message once at DATA."""

    def __init__(self, services: Services) -> None:
        self.services = services

    async def handle_MAIL(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        mail_options: list[str],
    ) -> str:
        # Before the sender spends a message on it: a store known to be away, or a disk too
        # full to take what the sender declares (SIZE=) or anything at all.
        if self.services.store.health.state in ("down", "restarting"):
            return TEMPORARY_FAILURE
        if await self.services.disk.low(_declared_size(mail_options)):
            return NO_ROOM
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if len(envelope.rcpt_tos) >= self.services.sources.mail_limits.recipients:
            # The sender delivers to the rest in another transaction (RFC 5321, 4.5.3.1.10).
            return "452 4.5.3 Too many recipients"
        if await workspace_for(self.services, address) is None:  # an outage: handle_exception
            return "550 5.1.1 No workspace receives mail at this address"
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or envelope.content or b""
        data = raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogateescape")
        try:
            delivered = await accept_email(self.services, data, list(envelope.rcpt_tos), via="smtp")
        except InboundRejected as exc:
            log.info("inbound message refused", extra={"reason": exc.message})
            return f"{exc.smtp_code} {_one_line(exc.message)}"
        ids = ", ".join(d.activity_id for d in delivered)
        return f"250 2.0.0 Accepted ({ids})"

    async def handle_exception(self, error: Exception) -> str:
        """Any stage's failure (the store unreachable at ``RCPT``, a write failing at
        ``DATA``…): a temporary refusal the sender retries, never the exception's text
        (aiosmtpd's default is a permanent ``500`` quoting it)."""
        known = capability_error_of(error)
        if isinstance(known, InsufficientStorage):
            return NO_ROOM
        if isinstance(known, ServiceUnavailable):
            log.warning("SMTP: store unavailable", extra={"error": repr(error)[:500]})
            return TEMPORARY_FAILURE
        log.error("SMTP: unexpected error", exc_info=error)
        return TEMPORARY_FAILURE


def _declared_size(mail_options: list[str]) -> int:
    """The message size a sender declares with ``MAIL FROM:<…> SIZE=n`` (RFC 1870), or 0."""
    for option in mail_options:
        name, _, value = option.partition("=")
        if name.upper() == "SIZE" and value.isdigit():
            return int(value)
    return 0


def _one_line(text: str) -> str:
    return " ".join(text.split())[:400]


async def start_smtp_server(
    services: Services, host: str, port: int, *, hostname: str | None = None
) -> asyncio.Server:
    """Listen for SMTP on ``host:port`` (port 0: any free port; read it from the server)."""
    handler = InboundHandler(services)
    loop = asyncio.get_running_loop()

    def protocol() -> Any:
        return SMTP(
            handler,
            data_size_limit=services.sources.inbound_max_bytes,
            enable_SMTPUTF8=True,
            hostname=hostname or services.sources.inbound_domain,
            ident="fincap",
            loop=loop,
        )

    return await loop.create_server(protocol, host=host, port=port)
