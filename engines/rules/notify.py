"""Notifications a rule sends: a signed webhook POST, or an e-mail through an SMTP relay.

Webhooks: the body is JSON; ``X-Fincap-Signature: t=<unix time>,v1=<hex>`` where ``v1`` is
HMAC-SHA256 over ``"<t>.<body>"`` with the rule's webhook secret (shown once when the rule is
saved), so a receiver checks both origin and freshness. E-mail: plain text through the relay of
``FINCAP_SMTP_*`` (STARTTLS and login when configured), sent from a thread so the event loop
never waits on the socket.

Both connect through the outbound policy (``engines.outbound``): a webhook on a private address
is refused, and every refused or failed connection reads ``could not connect to <host>:<port>``.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import smtplib
import socket
import time
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import httpx

from engines.outbound import OutboundPolicy, Unreachable

log = logging.getLogger("fincap.outbound")
SIGNATURE_HEADER = "X-Fincap-Signature"
EVENT_HEADER = "X-Fincap-Event"


class NotifyError(Exception):
    """A notification could not be delivered; the message says why."""


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``v1`` value of the signature header."""
    signed = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


async def post_webhook(
    url: str,
    payload: dict[str, Any],
    secret: str,
    *,
    outbound: OutboundPolicy,
    timeout_s: float = 10.0,
) -> int:
    """POST ``payload`` to ``url`` signed with ``secret`` through the outbound policy; the HTTP
    status (2xx) or NotifyError."""
    body = json.dumps(payload, sort_keys=True, default=str).encode()
    now = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "fincap-rules/1",
        EVENT_HEADER: str(payload.get("event", "rule.matched")),
        SIGNATURE_HEADER: f"t={now},v1={signature(secret, now, body)}",
    }
    try:
        async with outbound.http_client(timeout=timeout_s) as client:
            response = await client.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        # The policy's one text ("could not connect to host:port") for every failure.
        raise NotifyError(f"webhook {url}: {exc}") from None
    except httpx.InvalidURL as exc:  # e.g. an IPv4 address httpx will not read (0177.0.0.1)
        raise NotifyError(f"webhook {url}: not a valid URL ({exc})") from None
    if not 200 <= response.status_code < 300:
        raise NotifyError(f"webhook {url} answered HTTP {response.status_code}")
    return response.status_code


@dataclass(frozen=True)
class SmtpConfig:
    """The relay e-mail notifications go through."""

    host: str
    port: int = 587
    sender: str = "fincap@localhost"
    username: str | None = None
    password: str | None = None
    starttls: bool = True
    timeout_s: float = 15.0


class _PolicySMTP(smtplib.SMTP):
    """``smtplib.SMTP`` whose socket the outbound policy opens; STARTTLS names the host."""

    def __init__(self, outbound: OutboundPolicy, timeout: float) -> None:
        self._outbound = outbound
        super().__init__(timeout=timeout)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        return self._outbound.connect(host, port, timeout)


async def send_email(
    config: SmtpConfig, to: str, subject: str, text: str, *, outbound: OutboundPolicy
) -> None:
    """Send a plain-text e-mail through the relay; NotifyError when it refuses or is down."""
    message = EmailMessage()
    message["From"] = config.sender
    message["To"] = to
    message["Subject"] = subject
    message.set_content(text)

    def deliver() -> None:
        with _PolicySMTP(outbound, config.timeout_s) as smtp:
            try:
                smtp.connect(config.host, config.port)
                if config.starttls:
                    smtp.starttls()
            except (OSError, smtplib.SMTPException) as exc:
                # Refused, closed, timed out, TLS failed or not an SMTP server: one text.
                if not isinstance(exc, Unreachable):
                    log.warning(
                        "SMTP connection failed",
                        extra={"host": config.host, "port": config.port, "reason": repr(exc)},
                    )
                raise Unreachable(config.host, config.port) from None
            if config.username:
                smtp.login(config.username, config.password or "")
            smtp.send_message(message)

    try:
        await asyncio.to_thread(deliver)
    except Unreachable as exc:
        raise NotifyError(f"e-mail to {to} was not sent: {exc}") from None
    except (OSError, smtplib.SMTPException) as exc:
        raise NotifyError(f"e-mail to {to} was not sent: {exc}") from exc
