"""Structured JSON logs and the request id (pure ASGI, so contextvars survive)."""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import re
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

if TYPE_CHECKING:
    from app.host.metrics import Metrics

REQUEST_ID_HEADER = "x-request-id"
_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="")
_VALID_INCOMING_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

access_log = logging.getLogger("fincap.access")


def current_request_id() -> str:
    return _request_id.get()


@contextlib.contextmanager
def request_id_scope(request_id: str) -> Iterator[None]:
    """Log under ``request_id`` (a job carries the id of the request that queued it)."""
    token = _request_id.set(request_id)
    try:
        yield
    finally:
        _request_id.reset(token)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id, extra fields."""

    # uvicorn adds an ANSI-coloured copy of the message; JSON consumers want it once.
    STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "color_message"}

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if request_id := current_request_id():
            entry["requestId"] = request_id
        entry.update({k: v for k, v in vars(record).items() if k not in self.STANDARD})
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str = "INFO") -> None:
    """Route fincap's and uvicorn's logs through the JSON formatter on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
    # Our access log carries the request id; uvicorn's own would repeat it without one.
    logging.getLogger("uvicorn.access").disabled = True


class RequestIdMiddleware:
    """Gives each HTTP request an id (a sane incoming X-Request-Id is kept), returns it as a
    response header, and writes one access-log line when the response is done."""

    def __init__(self, app: ASGIApp, metrics: Metrics | None = None) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1")
        request_id = incoming if _VALID_INCOMING_ID.match(incoming) else uuid.uuid4().hex
        token = _request_id.set(request_id)
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.append((REQUEST_ID_HEADER.encode(), request_id.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - started
            if self.metrics is not None:
                # Starlette's router leaves the matched route in the scope.
                route = getattr(scope.get("route"), "path", None)
                slug = scope.get("path_params", {}).get("slug")
                self.metrics.observe_request(scope["method"], route, status, elapsed, slug)
            access_log.info(
                "request",
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "durationMs": round(elapsed * 1000, 2),
                },
            )
            _request_id.reset(token)
