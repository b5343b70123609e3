"""Notifications a rule sends: a signed webhook POST, or an e-mail through an SMTP relay.

Webhooks: the body is JSON; ``X-Fincap-Signature: t=<unix time>,v1=<hex>`` where ``v1`` is
HMAC-SHA256 over ``"<t>.<body>"`` with the rule's webhook secret (shown once when the rule is
saved), so a receiver checks both origin and freshness. E-mail: plain text through the relay of
``FINCAP_SMTP_*`` (STARTTLS and login when configured), sent from a thread so the event loop
never waits on the socket.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import smtplib
import time
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

import httpx

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
    timeout_s: float = 10.0,
    client: httpx.AsyncClient | None = None,
) -> int:
    """POST ``payload`` to ``url`` signed with ``secret``; the HTTP status (2xx) or NotifyError."""
    body = json.dumps(payload, sort_keys=True, default=str).encode()
    now = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "fincap-rules/1",
        EVENT_HEADER: str(payload.get("event", "rule.matched")),
        SIGNATURE_HEADER: f"t={now},v1={signature(secret, now, body)}",
    }
    try:
        if client is not None:
            response = await client.post(url, content=body, headers=headers, timeout=timeout_s)
        else:
            async with httpx.AsyncClient(timeout=timeout_s, follow_redirects=False) as own:
                response = await own.post(url, content=body, headers=headers)
    except httpx.HTTPError as exc:
        raise NotifyError(f"webhook {url} could not be reached: {type(exc).__name__}") from exc
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


async def send_email(config: SmtpConfig, to: str, subject: str, text: str) -> None:
    """Send a plain-text e-mail through the relay; NotifyError when it refuses or is down."""
    message = EmailMessage()
    message["From"] = config.sender
    message["To"] = to
    message["Subject"] = subject
    message.set_content(text)

    def deliver() -> None:
        with smtplib.SMTP(config.host, config.port, timeout=config.timeout_s) as smtp:
            if config.starttls:
                smtp.starttls()
            if config.username:
                smtp.login(config.username, config.password or "")
            smtp.send_message(message)

    try:
        await asyncio.to_thread(deliver)
    except (OSError, smtplib.SMTPException) as exc:
        raise NotifyError(f"e-mail to {to} was not sent: {exc}") from exc
