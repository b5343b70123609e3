"""IMAP mailboxes (RFC 3501) with the standard library's ``imaplib``.

Why ``imaplib`` rather than an asyncio client: it is part of Python (maintained with it, no
extra dependency), speaks every command we need (LOGIN, SELECT, UID SEARCH, UID FETCH), and
mailbox work is a few short sessions a minute: each call here opens a session in a worker
thread (``asyncio.to_thread``), does its work and logs out, so nothing blocks the event loop
and no connection is left open between polls.

The socket is opened by the outbound policy (``engines.outbound``) to an address it checked;
``imaplib`` then speaks TLS over it naming the server as configured (SNI and certificate).
Anything that goes wrong before the server has greeted and accepted TLS reads the same,
``could not connect to <host>:<port>``: a closed port, a timeout and another service's banner
are told apart in the server log only.
"""

from __future__ import annotations

import asyncio
import contextlib
import imaplib
import logging
import re
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import getaddresses
from typing import ClassVar, Literal

from engines.connectors.errors import (
    ConnectorError,
    ConnectorUnreachable,
    ProviderFailed,
    Refused,
    SignInRefused,
)
from engines.mail import body_text
from engines.outbound import OutboundPolicy, unreachable_text

log = logging.getLogger("fincap.outbound")

Security = Literal["tls", "starttls", "none"]
TIMEOUT_S = 20.0
# Signing in while a person (or a script) waits for mailboxes.connect's answer: a server that
# has not answered by then is reported as unreachable instead of holding the request.
SIGN_IN_CHECK_TIMEOUT_S = 8.0
_UIDVALIDITY = re.compile(rb"UIDVALIDITY (\d+)")
_UID = re.compile(rb"UID (\d+)")


@dataclass(frozen=True)
class FetchedMessage:
    """One message taken from the mailbox: its UID and its raw RFC 5322 bytes."""

    uid: int
    raw: bytes


@dataclass(frozen=True)
class MailboxHit:
    """A message a provider search found, with the headers activity.search shows."""

    uid: int
    message_id: str
    subject: str = ""
    sender: str = ""
    date: str = ""
    snippet: str = ""


@dataclass(frozen=True)
class ImapMailbox:
    """One mailbox folder on an IMAP server, reached with a user name and an app password."""

    kind: ClassVar[str] = "imap"
    host: str
    port: int
    security: Security
    username: str
    password: str
    folder: str = "INBOX"
    timeout_s: float = TIMEOUT_S
    # Where connections may go; the default admits public addresses only.
    outbound: OutboundPolicy = field(default_factory=OutboundPolicy)
    # Tests of a TLS server with a self-signed certificate hand in their own context.
    ssl_context: ssl.SSLContext | None = None

    def describe(self) -> str:
        return f"imap://{self.username}@{self.host}:{self.port}/{self.folder}"

    # -- public coroutines ------------------------------------------------------------------

    async def check(self) -> int:
        """Sign in and open the folder; its UIDVALIDITY. ``ConnectorError`` says what failed."""
        return await asyncio.to_thread(self._check)

    async def fetch_new(
        self, after_uid: int, since: date | None, limit: int
    ) -> tuple[int, list[FetchedMessage]]:
        """(UIDVALIDITY, up to ``limit`` messages with a UID above ``after_uid``, oldest first).
        With ``after_uid`` 0 only messages from ``since`` on are taken (the first poll)."""
        return await asyncio.to_thread(self._fetch_new, after_uid, since, limit)

    async def search(self, query: str, limit: int, with_details: bool) -> list[MailboxHit]:
        """Messages whose headers or body contain ``query`` (IMAP ``UID SEARCH TEXT``), newest
        first, at most ``limit``; with ``with_details``, subject, sender, date and a snippet."""
        return await asyncio.to_thread(self._search, query, limit, with_details)

    # -- sessions (in a worker thread) -------------------------------------------------------

    @contextmanager
    def _session(self) -> Iterator[tuple[imaplib.IMAP4, int]]:
        client = self._open()
        try:
            client.login(self.username, self.password)
            status, _ = client.select(_quote(self.folder), readonly=True)
            if status != "OK":
                raise Refused(f"the folder {self.folder!r} cannot be opened")
            validity = _uidvalidity(client)
        except ConnectorError:
            _logout(client)
            raise
        except imaplib.IMAP4.abort as exc:  # the connection broke mid-command
            _logout(client)
            raise self._unreachable(exc) from None
        except imaplib.IMAP4.error as exc:
            _logout(client)
            text = _text(exc)
            # A refused sign-in will be refused again; anything else the server may carry out
            # on a later try. The server's own words, read because imaplib says it no other
            # way: one IMAP4.error for every NO/BAD answer, the refused sign-in told only by
            # RFC 5530's [AUTHENTICATIONFAILED] code or, from older servers, by naming LOGIN.
            signed_out = "AUTHENTICATIONFAILED" in text.upper() or "LOGIN" in text.upper()
            kind = SignInRefused if signed_out else ProviderFailed
            raise kind(f"the IMAP server refused: {text}") from None
        except OSError as exc:
            _logout(client)
            raise self._unreachable(exc) from None
        try:
            yield client, validity
        except imaplib.IMAP4.abort as exc:
            raise self._unreachable(exc) from None
        except imaplib.IMAP4.error as exc:
            raise ProviderFailed(f"the IMAP server refused: {_text(exc)}") from None
        except OSError as exc:
            raise self._unreachable(exc) from None
        finally:
            _logout(client)

    def _open(self) -> imaplib.IMAP4:
        """A greeted connection (TLS up when configured), or the uniform ``ConnectorError``."""
        client: imaplib.IMAP4 | None = None
        try:
            context = self.ssl_context or ssl.create_default_context()
            if self.security == "tls":
                client = _PolicyIMAP4SSL(
                    self.outbound, self.host, self.port, context, self.timeout_s
                )
            else:
                client = _PolicyIMAP4(self.outbound, self.host, self.port, self.timeout_s)
                if self.security == "starttls":
                    client.starttls(ssl_context=context)
            return client
        except (OSError, EOFError, imaplib.IMAP4.error, UnicodeError, ValueError) as exc:
            # Refused by the policy, closed port, timeout, TLS failure, or a greeting that is
            # not IMAP's: one text for all (the reason is logged).
            _logout(client)
            raise self._unreachable(exc) from None

    def _unreachable(self, exc: BaseException) -> ConnectorUnreachable:
        log.warning(
            "IMAP connection failed",
            extra={"host": self.host, "port": self.port, "reason": repr(exc)},
        )
        return ConnectorUnreachable(unreachable_text(self.host, self.port))

    def _check(self) -> int:
        with self._session() as (_, validity):
            return validity

    def _fetch_new(
        self, after_uid: int, since: date | None, limit: int
    ) -> tuple[int, list[FetchedMessage]]:
        with self._session() as (client, validity):
            if after_uid > 0:
                criteria = ["UID", f"{after_uid + 1}:*"]
            elif since is not None:
                criteria = ["SINCE", since.strftime("%d-%b-%Y")]
            else:
                criteria = ["ALL"]
            uids = [u for u in _search_uids(client, criteria) if u > after_uid][:limit]
            fetched = []
            for uid in uids:
                status, data = client.uid("FETCH", str(uid), "(BODY.PEEK[])")
                raw = _literal(data) if status == "OK" else None
                if raw is not None:
                    fetched.append(FetchedMessage(uid, raw))
            return validity, fetched

    def _search(self, query: str, limit: int, with_details: bool) -> list[MailboxHit]:
        with self._session() as (client, _):
            client._encoding = "utf-8"  # type: ignore[attr-defined]  # non-ASCII search text
            uids = _search_uids(
                client,
                ["CHARSET", "UTF-8", "TEXT", _quote(query)]
                if not query.isascii()
                else ["TEXT", _quote(query)],
            )
            newest = sorted(uids, reverse=True)[:limit]
            hits = []
            what = "(BODY.PEEK[HEADER.FIELDS (MESSAGE-ID SUBJECT FROM DATE)]"
            what += " BODY.PEEK[]<0.65536>)" if with_details else ")"
            for uid in newest:
                status, data = client.uid("FETCH", str(uid), what)
                if status != "OK":
                    continue
                hits.append(_hit(uid, data, with_details))
            return hits


class _PolicyIMAP4(imaplib.IMAP4):
    """``imaplib.IMAP4`` whose socket the outbound policy opens (to a checked address)."""

    def __init__(self, outbound: OutboundPolicy, host: str, port: int, timeout: float) -> None:
        self._outbound = outbound
        super().__init__(host, port, timeout=timeout)

    def _create_socket(self, timeout: float | None) -> socket.socket:
        return self._outbound.connect(self.host, self.port, timeout)


class _PolicyIMAP4SSL(imaplib.IMAP4_SSL):
    """``imaplib.IMAP4_SSL`` over a policy socket; TLS names the configured host."""

    def __init__(
        self,
        outbound: OutboundPolicy,
        host: str,
        port: int,
        context: ssl.SSLContext,
        timeout: float,
    ) -> None:
        self._outbound = outbound
        super().__init__(host, port, ssl_context=context, timeout=timeout)

    def _create_socket(self, timeout: float | None) -> socket.socket:
        raw = self._outbound.connect(self.host, self.port, timeout)
        return self.ssl_context.wrap_socket(raw, server_hostname=self.host)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _text(exc: BaseException) -> str:
    value = exc.args[0] if exc.args else exc
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _logout(client: imaplib.IMAP4 | None) -> None:
    if client is None:
        return
    with contextlib.suppress(imaplib.IMAP4.error, OSError):
        client.logout()


def _uidvalidity(client: imaplib.IMAP4) -> int:
    _, data = client.response("UIDVALIDITY")
    for item in data or []:
        if item is not None:
            return int(item)
    _, data = client.status("INBOX", "(UIDVALIDITY)")
    match = _UIDVALIDITY.search(b" ".join(d for d in data if isinstance(d, bytes)))
    return int(match.group(1)) if match else 0


def _search_uids(client: imaplib.IMAP4, criteria: list[str]) -> list[int]:
    status, data = client.uid("SEARCH", *criteria)
    if status != "OK" or not data or not data[0]:
        return []
    return sorted(int(uid) for uid in data[0].split())


def _literal(data: list[object]) -> bytes | None:
    for item in data:
        if isinstance(item, tuple) and len(item) >= 2 and isinstance(item[1], bytes):
            return item[1]
    return None


def _hit(uid: int, data: list[object], with_details: bool) -> MailboxHit:
    literals = [item[1] for item in data if isinstance(item, tuple) and isinstance(item[1], bytes)]
    headers = message_from_bytes(literals[0] if literals else b"", policy=policy.default)
    message_id = str(headers.get("message-id", "") or "").strip()
    if not with_details:
        return MailboxHit(uid=uid, message_id=message_id)
    senders = getaddresses([str(headers.get("from", "") or "")])
    body = ""
    if len(literals) > 1:
        # The first 64 KB of the message: enough for the text part of nearly any email.
        whole = message_from_bytes(literals[1], policy=policy.default)
        if isinstance(whole, EmailMessage):
            body = body_text(whole)
    return MailboxHit(
        uid=uid,
        message_id=message_id,
        subject=" ".join(str(headers.get("subject", "") or "").split()),
        sender=senders[0][1] if senders else "",
        date=str(headers.get("date", "") or ""),
        snippet=" ".join(body.split())[:200],
    )
