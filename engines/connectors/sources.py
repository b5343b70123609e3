"""The interface of the source connectors (IMAP mailboxes, WhatsApp Graph).

A connector is built from plain values (a base URL or host, credentials) and an injectable
transport, talks one protocol, and reports every failure as a subclass of
``errors.ConnectorError``: its class ``reason`` names the kind (stored beside the message), its
message says what failed in words a person can act on (shown on the connection and in the
activity log). No
database, no settings: the resolvers build connectors from stored records and ``Settings``.
"""

from __future__ import annotations

from typing import ClassVar, Protocol


class Connector(Protocol):
    """What every connector is: a kind name and a description of where it points (never a
    secret), for logs and for the connection's record."""

    kind: ClassVar[str]

    def describe(self) -> str:
        """Where this connector points, e.g. ``imap://user@host:993/INBOX``."""
        ...


__all__ = ["Connector"]
