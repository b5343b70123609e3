"""The envelope every JSON answer of the HTTP faces is sent in (spec §4.1 and §7).

Success ``{success: true, code: 200, data: {result}}``; failure ``{success: false, code,
error: {errorCode, errorMessage, reason}}`` with ``code`` and ``errorCode`` equal to the HTTP
status and ``reason`` the stable, machine-readable name of the error (a fincap extension).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from resolvers.framework.errors import CapabilityError, capability_error_of, reason_for_status

log = logging.getLogger("fincap.http")


class EnvelopeResponse(JSONResponse):
    """JSON without spaces, dates as ISO strings (``render`` receives already dumped data)."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, separators=(",", ":"), default=str)
        # A message may quote client text holding a lone surrogate (a bad URL, say); written as
        # its JSON escape it stays valid JSON instead of failing to encode.
        return text.encode("utf-8", "backslashreplace")


def success(result: BaseModel) -> Response:
    # Absent is not null: a field the handler did not set (a compact projection) is omitted.
    data = {"result": result.model_dump(mode="json", exclude_unset=True)}
    return EnvelopeResponse({"success": True, "code": 200, "data": data})


def failure(status: int, message: str, reason: str | None = None) -> Response:
    """The failure envelope: the spec's fields, and ``reason`` beside them (the error class's
    stable name; by default the one of ``status``, ``resolvers.framework.errors``)."""
    return EnvelopeResponse(failure_body(status, message, reason), status_code=status)


def failure_body(status: int, message: str, reason: str | None = None) -> dict[str, Any]:
    """The failure envelope as data (``failure`` sends it; an event stream's last message)."""
    error = {
        "errorCode": status,
        "errorMessage": message,
        "reason": reason or reason_for_status(status),
    }
    return {"success": False, "code": status, "error": error}


def error_body(exc: Exception) -> dict[str, Any]:
    """``render_error``'s envelope as data."""
    if isinstance(exc, CapabilityError) and exc.exposed:
        return failure_body(exc.status, exc.message, exc.reason)
    log.error("unhandled error", exc_info=exc)
    return failure_body(500, "Internal server error", CapabilityError.reason)


def render_error(exc: Exception) -> Response:
    """A capability error as its envelope (with ``Retry-After`` when waiting cures it), the
    store's outage in any form as the 503 it is; anything else as a 500 that reveals nothing."""
    error = capability_error_of(exc)
    if error is not None and error.exposed:
        if error is not exc:  # the driver's own error: its text is for the log only
            log.warning("store unavailable", extra={"error": repr(exc)[:500]})
        response = failure(error.status, error.message, error.reason)
        if error.retry_after is not None:
            response.headers["Retry-After"] = str(error.retry_after)
        return response
    log.error("unhandled error", exc_info=exc)
    return failure(500, "Internal server error", CapabilityError.reason)


async def _no_route(request: Request, exc: Exception) -> Response:
    return failure(404, f"No route for {request.method} {request.url.path}")


async def _method_not_allowed(request: Request, exc: Exception) -> Response:
    response = failure(405, f"Method {request.method} not allowed on {request.url.path}")
    # The router's exception names the route's methods (RFC 9110: a 405 carries Allow).
    response.headers.update(getattr(exc, "headers", None) or {})
    return response


async def _server_error(request: Request, exc: Exception) -> Response:
    return render_error(exc)  # a route's uncaught store outage is still a 503


# The app's own answers for a path no route takes, a method it does not take, and anything
# unexpected: the envelope, like every other answer.
EXCEPTION_HANDLERS: dict[Any, Callable[[Request, Exception], Awaitable[Response]]] = {
    404: _no_route,
    405: _method_not_allowed,
    500: _server_error,
}
