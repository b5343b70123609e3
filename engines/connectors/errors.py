"""The one error tree every connector raises: accounting (Xero, QuickBooks) and sources (IMAP,
WhatsApp Graph) alike.

Its message is shown to people (on the connection, in the activity log, in a 502), so it says
what failed in words they can act on. Its class names the kind of failure, and the class's
``reason`` is that kind as a stable snake_case word for scripts (stored next to the message as
``errorReason`` / ``lastErrorReason``). ``retryable`` belongs to the kind, not to the raise
site: trying again later may help an unreachable or failing provider or a rate limit, never a
refusal or an answer we cannot read. ``status`` is the provider's HTTP status when there was
one. A caller that must tell kinds of failure apart reads the class, never the message.
"""

from __future__ import annotations

from typing import ClassVar


class ConnectorError(Exception):
    """An outside system refused a call or could not be reached (raise a subclass: its class
    names the kind)."""

    reason: ClassVar[str] = "connector_error"
    retryable: ClassVar[bool] = False

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class ConnectorUnreachable(ConnectorError):
    """The outside system could not be reached at all (refused by the outbound policy, a closed
    port, a timeout, a TLS failure, not the protocol expected): its message carries the outbound
    policy's one text for all of them, so it says nothing about the network. Worth retrying."""

    reason = "unreachable"
    retryable = True


class RemoteGone(ConnectorError):
    """The remote record no longer exists (404 at the provider)."""

    reason = "remote_gone"


class GrantRevoked(ConnectorError):
    """The provider no longer accepts the refresh token: the user must connect again."""

    reason = "grant_revoked"


class Refused(ConnectorError):
    """The provider refused the request (a 4xx other than 404 and 429: credentials it does not
    accept, or a request it rejects; an IMAP folder that cannot be opened). Asking the same
    again gets the same answer."""

    reason = "refused"


class SignInRefused(ConnectorError):
    """The IMAP server refused the sign-in (user name or password): fix them and connect
    again."""

    reason = "sign_in_refused"


class RateLimited(ConnectorError):
    """The provider asks to slow down (429): worth retrying later."""

    reason = "rate_limited"
    retryable = True


class ProviderFailed(ConnectorError):
    """The provider failed to answer (a 5xx, or an IMAP command the server could not carry out
    once signed in): worth retrying later."""

    reason = "provider_error"
    retryable = True


class InvalidAnswer(ConnectorError):
    """The provider answered something we cannot read: an id, a URL or a token missing, not the
    JSON expected. Asking again would get the same."""

    reason = "invalid_answer"


class TooLarge(ConnectorError):
    """What the provider offers is larger than fincap takes (WhatsApp media over the upload
    limit)."""

    reason = "too_large"


class RemotePaid(ConnectorError):
    """The remote bill is paid, so the provider will not void or delete it: remove the payment
    there first."""

    reason = "remote_paid"


class OriginalUnreadable(ConnectorError):
    """The document's original file could not be read from fincap's store, so it cannot be
    attached at the provider."""

    reason = "original_unreadable"


class SecretUnreadable(ConnectorError):
    """A stored credential cannot be decrypted (the server's secret key was replaced without
    keeping the old one): connect again."""

    reason = "secret_unreadable"


def error_for_status(status: int, message: str) -> ConnectorError:
    """The error of a provider's failed HTTP answer, by its status: 404 gone, 429 rate limited,
    5xx provider failure, any other a refusal."""
    if status == 404:
        return RemoteGone(message, status=status)
    if status == 429:
        return RateLimited(message, status=status)
    if status >= 500:
        return ProviderFailed(message, status=status)
    return Refused(message, status=status)


def reason_of(exc: BaseException) -> str | None:
    """The ``reason`` of a connector error, or of the connector error another error was raised
    from (``raise BadGateway(...) from exc``); None when no connector error is behind it."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectorError):
            return cause.reason
        cause = cause.__cause__
    return None


__all__ = [
    "ConnectorError",
    "ConnectorUnreachable",
    "GrantRevoked",
    "InvalidAnswer",
    "OriginalUnreadable",
    "ProviderFailed",
    "RateLimited",
    "Refused",
    "RemoteGone",
    "RemotePaid",
    "SecretUnreadable",
    "SignInRefused",
    "TooLarge",
    "error_for_status",
    "reason_of",
]
