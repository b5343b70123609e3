"""The one error hierarchy every face maps by class.

                                 status  reason
    CapabilityError              500     internal_error       never shows internals
    ├── BadRequest               400     invalid_request      names the field and the reason
    │   └── WorkspaceRequired    400     workspace_required   'Organization context required'
    ├── Unauthenticated          401     unauthenticated      no, unknown or ended credential
    ├── Forbidden                403     forbidden            not allowed here
    │   ├── MissingScope         403     missing_scope        (MCP: insufficient_scope)
    │   ├── WorkspaceRestricted  403     workspace_restricted a key or token bound elsewhere
    │   ├── NotAMember           403     not_a_member         the workspace is not the caller's
    │   ├── RoleRequired         403     role_required        the caller's role may not call it
    │   ├── RequesterRefused     403     requester_refused    an approved call's requester no
    │   │                                                     longer may make it
    │   └── AccessChanged        403     access_changed       a live stream's role or scopes
    │                                                         changed: open it again
    ├── NotFound                 404     not_found            foreign ids look unknown too
    ├── Conflict                 409     conflict             a compare-and-set kept losing
    ├── PayloadTooLarge          413     payload_too_large    body above the service's limit
    ├── Unprocessable            422     unprocessable        an unreadable original or sentence
    ├── TooManyRequests          429     too_many_requests    an expensive call running, a budget
    ├── BadGateway               502     bad_gateway          a provider refused or failed
    ├── ServiceUnavailable       503     service_unavailable  the store cannot be reached now
    └── InsufficientStorage      507     insufficient_storage the store's disk is nearly full

``reason`` is the stable, machine-readable name of the class (snake_case, one per class), for
clients to branch on instead of the message text. REST puts it beside the spec's fields in the
failure envelope (``error.reason``), GraphQL in ``errors[].extensions`` (with ``code`` and
``status``), MCP in the error result's structured content; the CLI reads it. The HTTP faces'
own refusals are named by their status (``STATUS_REASONS`` below).

``retry_after`` (seconds) is set on the errors a client should simply repeat later (429, 503,
507); the HTTP faces send it as ``Retry-After``, GraphQL as ``extensions.retryAfter``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import ClassVar

from persistence.errors import QueryTimeout, store_error_of
from persistence.where import WhereError


class CapabilityError(Exception):
    """Base of every error a capability call may raise; its message is safe to show."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "INTERNAL_SERVER_ERROR"
    reason: ClassVar[str] = "internal_error"
    # Seconds after which repeating the call may succeed (``Retry-After``); None: not a
    # failure that waiting cures.
    retry_after: int | None = None

    def __init__(self, message: str = "Internal server error") -> None:
        super().__init__(message)
        self.message = message

    @property
    def exposed(self) -> bool:
        """Whether faces show the message (client errors, and a provider's own answer)."""
        return self.status < 500


class BadRequest(CapabilityError):
    """The request does not satisfy the capability's contract.

    Made by ``naming``, it keeps the inputs its message names, each with why (``problems``:
    ``("where.conditions[0].op", "…")``), so a face that shows those inputs under other names
    (a GraphQL connection's typed filter, its ``after``) renames them (``renamed``) instead of
    rewriting the words.
    """

    status = 400
    code = "BAD_REQUEST"
    reason = "invalid_request"
    problems: tuple[tuple[str, str], ...] = ()
    more = 0  # problems found beyond those named
    opening = ""

    @classmethod
    def naming(
        cls,
        problems: Sequence[tuple[str, str]],
        *,
        more: int = 0,
        opening: str = "Invalid request: ",
    ) -> BadRequest:
        """``<opening><input>: <why>; …`` (with `` (and <more> more)``), keeping the parts."""
        named = "; ".join(f"{place}: {why}" for place, why in problems)
        error = BadRequest(opening + named + (f" (and {more} more)" if more > 0 else ""))
        error.problems, error.more, error.opening = tuple(problems), more, opening
        return error

    def renamed(self, name: Callable[[str], str]) -> BadRequest:
        """The same refusal with each named input as ``name`` calls it; itself when it names
        none or ``name`` changes none."""
        problems = [(name(place), why) for place, why in self.problems]
        if problems == list(self.problems):
            return self
        return BadRequest.naming(problems, more=self.more, opening=self.opening)


class Unauthenticated(CapabilityError):
    """No credential, or one that is unknown, revoked or expired."""

    status = 401
    code = "UNAUTHENTICATED"
    reason = "unauthenticated"

    def __init__(self, message: str = "API key authentication required") -> None:
        super().__init__(message)


class Forbidden(CapabilityError):
    """The caller is known but may not act here (workspace or scope)."""

    status = 403
    code = "FORBIDDEN"
    reason = "forbidden"


class MissingScope(Forbidden):
    """The credential lacks a scope the capability needs (OAuth ``insufficient_scope``)."""

    reason = "missing_scope"

    def __init__(self, scopes: tuple[str, ...]) -> None:
        super().__init__(f"This credential lacks the scope: {', '.join(scopes)}")
        self.scopes = scopes


class NotFound(CapabilityError):
    """The capability or the resource does not exist for this caller."""

    status = 404
    code = "NOT_FOUND"
    reason = "not_found"


class Conflict(CapabilityError):
    """The resource's state refuses the call: a concurrent change won every attempt of a
    compare-and-set (the call may be retried), or it was already done (a reviewed document)."""

    status = 409
    code = "CONFLICT"
    reason = "conflict"


class PayloadTooLarge(CapabilityError):
    """The request body exceeds the service's limit."""

    status = 413
    code = "PAYLOAD_TOO_LARGE"
    reason = "payload_too_large"


class Unprocessable(CapabilityError):
    """The request is valid, but the stored file it names cannot be processed (for example an
    unreadable original, or one over the analysis budgets); repeating it will not help."""

    status = 422
    code = "UNPROCESSABLE"
    reason = "unprocessable"


class TooManyRequests(CapabilityError):
    """The key already has an expensive call running, or spent its budget of expensive work;
    ``retry_after`` says in how many seconds to try again (faces send it as ``Retry-After``)."""

    status = 429
    code = "TOO_MANY_REQUESTS"
    reason = "too_many_requests"

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


# What a client is told to wait before trying again while the store is away: a restart of the
# embedded store takes about this long, and a client retrying sooner only adds load.
STORE_RETRY_AFTER_S = 5


class ServiceUnavailable(CapabilityError):
    """The store cannot be reached (or is being restarted) right now: the same call may be
    repeated after ``retry_after`` seconds. The message names no host and
    no driver."""

    status = 503
    code = "SERVICE_UNAVAILABLE"
    reason = "service_unavailable"

    def __init__(
        self,
        message: str = "The service's database is unavailable right now; "
        "try the same call again shortly",
        retry_after: int = STORE_RETRY_AFTER_S,
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    @property
    def exposed(self) -> bool:
        return True


class InsufficientStorage(CapabilityError):
    """The store's disk is nearly full: nothing new is accepted until an operator frees space
    (the message says so; nothing was stored)."""

    status = 507
    code = "INSUFFICIENT_STORAGE"
    reason = "insufficient_storage"

    def __init__(self, message: str, retry_after: int = 60) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    @property
    def exposed(self) -> bool:
        return True


class BadGateway(CapabilityError):
    """An outside service (Xero, QuickBooks) refused or failed; the message says which and
    how (it never carries credentials)."""

    status = 502
    code = "BAD_GATEWAY"
    reason = "bad_gateway"

    @property
    def exposed(self) -> bool:
        return True


ORG_REQUIRED = "Organization context required"
# The spec's message, then what to send: said to REST and GraphQL callers (the CLI and MCP
# put their own way of naming a workspace after ``ORG_REQUIRED``).
ORG_REQUIRED_HOW = (
    f"{ORG_REQUIRED}: send the header X-Service-Org-Id with the id of the workspace to act in "
    "(GET /v1/workspaces lists yours), or use a key restricted to one workspace"
)
KEY_RESTRICTED = "This API key is restricted to a different workspace"
NOT_A_MEMBER = "You are not a member of this workspace"
TOKEN_BOUND = "This token is bound to a different workspace; authorize again to act in another one"


class WorkspaceRequired(BadRequest):
    """The capability acts in a workspace and the call named none (spec §5), nor could one be
    inferred (the credential is not restricted to one and its person belongs to several)."""

    reason = "workspace_required"

    def __init__(self, message: str = ORG_REQUIRED_HOW) -> None:
        super().__init__(message)


class WorkspaceRestricted(Forbidden):
    """The API key is restricted to, or the OAuth token bound to, another workspace."""

    reason = "workspace_restricted"


class NotAMember(Forbidden):
    """The caller is not a member of the workspace the call names."""

    reason = "not_a_member"

    def __init__(self, message: str = NOT_A_MEMBER) -> None:
        super().__init__(message)


class RoleRequired(Forbidden):
    """The caller's role in the workspace may not call this capability."""

    reason = "role_required"


class RequesterRefused(Forbidden):
    """An approved call cannot run: its requester may no longer make it; nothing ran."""

    reason = "requester_refused"

    def __init__(self, why: str) -> None:
        super().__init__(f"The requester can no longer make this call: {why}; reject the request")


class AccessChanged(Forbidden):
    """A live event stream's authorization changed while it was open (the member's role, the
    grant's scopes): it ends, and opening it again authorizes it under the new rights."""

    reason = "access_changed"

    def __init__(self) -> None:
        super().__init__(
            "Your access to this workspace changed; open the stream again (resume with the "
            "last event id)"
        )


# The reason of a refusal made outside any capability, by its status: an HTTP face's own (a
# path no route takes, a method a route does not take, a body over the limit before it is
# parsed, a webhook's missing secret) is named like the class of that status.
STATUS_REASONS = {
    cls.status: cls.reason
    for cls in (
        BadRequest,
        Unauthenticated,
        Forbidden,
        NotFound,
        Conflict,
        PayloadTooLarge,
        Unprocessable,
        TooManyRequests,
        BadGateway,
        ServiceUnavailable,
        InsufficientStorage,
        CapabilityError,
    )
} | {405: "method_not_allowed"}


def reason_for_status(status: int) -> str:
    """The reason of a refusal with this HTTP status that no error class raised."""
    if status in STATUS_REASONS:
        return STATUS_REASONS[status]
    return CapabilityError.reason if status >= 500 else BadRequest.reason


def every_reason() -> list[str]:
    """Every ``reason`` a failure may carry (the OpenAPI envelope lists them): the classes of
    this module (the one hierarchy: ``tests/test_error_reasons.py`` finds any class elsewhere)."""
    reasons: list[str] = []
    pending: list[type[CapabilityError]] = [CapabilityError]
    while pending:
        cls = pending.pop(0)
        if cls.__module__ == __name__:
            reasons.append(cls.reason)
        pending += cls.__subclasses__()
    return sorted(set(reasons) | set(STATUS_REASONS.values()))


def capability_error_of(exc: BaseException) -> CapabilityError | None:
    """``exc`` as the capability error a face shows: itself, ``ServiceUnavailable`` for the
    store's outage in any form (``persistence.errors.store_error_of``), else None (unexpected:
    a 500 that reveals nothing). Faces call it on what reaches their last resort, so a door
    that reads the store outside ``invoke()`` answers an outage as a 503 too."""
    if isinstance(exc, CapabilityError):
        return exc
    if store_error_of(exc) is not None:
        return ServiceUnavailable()
    return None


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """Map the persistence layer's errors to capability errors (400s that say why, and 503
    while the store is unreachable).

    ``invoke()`` runs every call inside it; resolver functions that faces call outside
    ``invoke()`` (the GraphQL graph's batched reads) use it themselves.
    """
    try:
        yield
    except CapabilityError:
        raise
    except QueryTimeout as exc:
        named = f" (a regex on {', '.join(exc.fields)})" if exc.fields else ""
        raise BadRequest(
            f"The query exceeded its time limit{named}; narrow the where clause or simplify "
            "its regex"
        ) from None
    except WhereError as exc:
        raise BadRequest.naming([(exc.location, exc.reason)]) from None
    except Exception as exc:
        if store_error_of(exc) is None:
            raise
        raise ServiceUnavailable() from exc
