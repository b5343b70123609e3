"""How the MCP face answers failures that are not a tool's own result."""

from __future__ import annotations

import mcp_types as types
from mcp.shared.exceptions import MCPError

from app.mcp.access import Caller, explain
from resolvers.framework.errors import CapabilityError, MissingScope, NotFound

# JSON-RPC error code of a call the token's scopes do not cover (implementation-defined range).
INSUFFICIENT_SCOPE = -32003


def missing_scope(exc: MissingScope) -> MCPError:
    """A JSON-RPC error carrying ``insufficient_scope`` and the scopes needed."""
    return MCPError(
        INSUFFICIENT_SCOPE,
        f"insufficient_scope: this token lacks the scope {', '.join(exc.scopes)}; "
        "authorize again asking for it",
        {"error": "insufficient_scope", "scope": " ".join(exc.scopes), "reason": exc.reason},
    )


def protocol_error(exc: CapabilityError, caller: Caller) -> MCPError:
    """A capability failure met outside a tool call (reading a resource): not found and bad
    input are invalid params (the 2026-07-28 answer to an unknown resource), a refusal an
    invalid request; the message is the one REST gives."""
    if isinstance(exc, MissingScope):
        return missing_scope(exc)
    message = explain(exc, caller)
    if isinstance(exc, NotFound) or exc.status == 400:
        return MCPError(types.INVALID_PARAMS, message)
    return MCPError(types.INVALID_REQUEST if exc.exposed else types.INTERNAL_ERROR, message)


__all__ = ["INSUFFICIENT_SCOPE", "missing_scope", "protocol_error"]
