"""The one error hierarchy every face maps by class.

    CapabilityError              500  internal (never shows internals)
    ├── BadRequest               400  invalid input, naming the field and the reason
    ├── Unauthenticated          401  'API key authentication required'
    ├── Forbidden                403  wrong workspace
    │   └── MissingScope         403  missing scope (MCP: JSON-RPC error insufficient_scope)
    ├── NotFound                 404  unknown capability or resource (foreign ids look unknown)
    ├── Conflict                 409  the record kept changing under a compare-and-set; retry
    ├── PayloadTooLarge          413  body above the service's limit
    ├── Unprocessable            422  cannot be analysed (an unreadable original or sentence)
    ├── TooManyRequests          429  this key already runs an expensive call, or spent its budget
    └── BadGateway               502  an accounting provider refused or failed (message shown)

REST renders them as the failure envelope with the HTTP status equal to ``status``; GraphQL puts
``code`` into ``errors[].extensions``; the CLI prints the message to stderr.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import ClassVar

from persistence.errors import QueryTimeout
from persistence.where import WhereError


class CapabilityError(Exception):
    """Base of every error a capability call may raise; its message is safe to show."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "INTERNAL_SERVER_ERROR"

    def __init__(self, message: str = "Internal server error") -> None:
        super().__init__(message)
        self.message = message

    @property
    def exposed(self) -> bool:
        """Whether faces show the message (client errors, and a provider's own answer)."""
        return self.status < 500


class BadRequest(CapabilityError):
    """The request does not satisfy the capability's contract."""

    status = 400
    code = "BAD_REQUEST"


class Unauthenticated(CapabilityError):
    """No credential, or one that is unknown, revoked or expired."""

    status = 401
    code = "UNAUTHENTICATED"

    def __init__(self, message: str = "API key authentication required") -> None:
        super().__init__(message)


class Forbidden(CapabilityError):
    """The caller is known but may not act here (workspace or scope)."""

    status = 403
    code = "FORBIDDEN"


class MissingScope(Forbidden):
    """The credential lacks a scope the capability needs (OAuth ``insufficient_scope``)."""

    def __init__(self, scopes: tuple[str, ...]) -> None:
        super().__init__(f"This credential lacks the scope: {', '.join(scopes)}")
        self.scopes = scopes


class NotFound(CapabilityError):
    """The capability or the resource does not exist for this caller."""

    status = 404
    code = "NOT_FOUND"


class Conflict(CapabilityError):
    """A concurrent change won every attempt of a compare-and-set; the call may be retried."""

    status = 409
    code = "CONFLICT"


class PayloadTooLarge(CapabilityError):
    """The request body exceeds the service's limit."""

    status = 413
    code = "PAYLOAD_TOO_LARGE"


class Unprocessable(CapabilityError):
    """The request is valid, but the stored file it names cannot be processed (for example an
    unreadable original, or one over the analysis budgets); repeating it will not help."""

    status = 422
    code = "UNPROCESSABLE"


class TooManyRequests(CapabilityError):
    """The key already has an expensive call running, or spent its budget of expensive work;
    ``retry_after`` says in how many seconds to try again (faces send it as ``Retry-After``)."""

    status = 429
    code = "TOO_MANY_REQUESTS"

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BadGateway(CapabilityError):
    """An outside service (Xero, QuickBooks) refused or failed; the message says which and
    how (it never carries credentials)."""

    status = 502
    code = "BAD_GATEWAY"

    @property
    def exposed(self) -> bool:
        return True


ORG_REQUIRED = "Organization context required"
KEY_RESTRICTED = "This API key is restricted to a different workspace"
NOT_A_MEMBER = "You are not a member of this workspace"
TOKEN_BOUND = "This token is bound to a different workspace; authorize again to act in another one"


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """Map the persistence layer's errors to capability errors (400s that say why).

    ``invoke()`` runs every handler inside it; resolver functions that faces call outside
    ``invoke()`` (the GraphQL graph's batched reads) use it themselves.
    """
    try:
        yield
    except QueryTimeout:
        raise BadRequest(
            "The query exceeded its time limit; narrow the where clause or simplify its regex"
        ) from None
    except WhereError as exc:
        raise BadRequest(f"Invalid request: {exc}") from None
