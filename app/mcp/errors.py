"""How the MCP face answers failures that are not a tool's own result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import mcp_types as types
from mcp.shared.exceptions import MCPError

from app.mcp.access import Caller, explain
from resolvers.framework.errors import (
    CapabilityError,
    MissingScope,
    NotFound,
    ServiceUnavailable,
    capability_error_of,
)

# JSON-RPC error code of a call the token's scopes do not cover (implementation-defined range).
INSUFFICIENT_SCOPE = -32003
# JSON-RPC error code of a call made while the store is unreachable: nothing ran, repeat it
# after ``data.retryAfter`` seconds (implementation-defined range).
SERVICE_UNAVAILABLE = -32004

T = TypeVar("T")


def missing_scope(exc: MissingScope) -> MCPError:
    """A JSON-RPC error carrying ``insufficient_scope`` and the scopes needed."""
    return MCPError(
        INSUFFICIENT_SCOPE,
        f"insufficient_scope: this token lacks the scope {', '.join(exc.scopes)}; "
        "authorize again asking for it",
        {"error": "insufficient_scope", "scope": " ".join(exc.scopes), "reason": exc.reason},
    )


def unavailable(exc: CapabilityError) -> MCPError:
    """The store's outage as a JSON-RPC error: REST's message, and its status, ``reason`` and
    ``Retry-After`` as data (an outage is no fault of the call, so not a tool error)."""
    data = {"status": exc.status, "reason": exc.reason, "retryAfter": exc.retry_after}
    return MCPError(SERVICE_UNAVAILABLE, exc.message, data)


def outage_as_error(handler: Callable[..., Awaitable[T]]) -> Callable[..., Awaitable[T]]:
    """``handler`` with the store's outage, in whatever form it reaches it (a capability's
    503, or the driver's error from a read made outside ``invoke()``), raised as
    ``unavailable``: never the driver's text."""

    async def handle(*args: Any) -> T:
        try:
            return await handler(*args)
        except MCPError:
            raise
        except Exception as exc:
            error = capability_error_of(exc)
            if isinstance(error, ServiceUnavailable):
                raise unavailable(error) from None
            raise

    return handle


def protocol_error(exc: CapabilityError, caller: Caller) -> MCPError:
    """A capability failure met outside a tool call (reading a resource): not found and bad
    input are invalid params (the 2026-07-28 answer to an unknown resource), a refusal an
    invalid request; the message is the one REST gives."""
    if isinstance(exc, MissingScope):
        return missing_scope(exc)
    if isinstance(exc, ServiceUnavailable):
        return unavailable(exc)
    message = explain(exc, caller)
    if isinstance(exc, NotFound) or exc.status == 400:
        return MCPError(types.INVALID_PARAMS, message)
    return MCPError(types.INVALID_REQUEST if exc.exposed else types.INTERNAL_ERROR, message)


__all__ = [
    "INSUFFICIENT_SCOPE",
    "SERVICE_UNAVAILABLE",
    "missing_scope",
    "outage_as_error",
    "protocol_error",
    "unavailable",
]
