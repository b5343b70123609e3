"""The one error every connector raises: accounting (Xero, QuickBooks) and sources (IMAP,
WhatsApp Graph) alike.

Its message is shown to people (on the connection, in the activity log, in a 502), so it says
what failed in words they can act on. ``retryable`` tells the caller whether trying again later
may help (a timeout, a 429 or 5xx) or not (wrong credentials, a refused grant); ``status`` is the
provider's HTTP status when there was one. A caller that must tell kinds of failure apart reads
the class (``ConnectorUnreachable``), never the message.
"""

from __future__ import annotations


class ConnectorError(Exception):
    """An outside system refused a call or could not be reached."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retryable = retryable


class ConnectorUnreachable(ConnectorError):
    """The outside system could not be reached at all (refused by the outbound policy, a closed
    port, a timeout, a TLS failure, not the protocol expected): its message is the outbound
    policy's one text for all of them, so it says nothing about the network. Worth retrying."""

    def __init__(self, message: str) -> None:
        super().__init__(message, retryable=True)


__all__ = ["ConnectorError", "ConnectorUnreachable"]
