"""``GET /v1/events``: the workspace's document events as Server-Sent Events.

Authorized like a documents query (every API-key form, an OAuth bearer, ``X-Service-Org-Id``;
``read_documents``), the checks made by ``resolvers.services.events.hub.open_stream``. Each event
is one SSE message::

    id: 6745a9f2c0ffee0000000001
    event: document.processed
    data: {"id": "…", "type": "document.processed", "documentId": "doc_…", "at": "…",
           "document": {…}}

A client that reconnects sends the last id it received as ``Last-Event-ID`` (browsers'
``EventSource`` do it by themselves; ``?after=`` does the same) and gets what it missed while the
events are kept (a day). A comment line every ``heartbeat`` seconds keeps proxies from closing
a quiet stream. The stream follows its authorization (``resolvers.services.events.stream_access``):
a revoked key or grant, a removed member or a changed role ends it, with an ``error`` message
carrying the failure envelope. When the store becomes unreachable the stream ends the same way
(``reason: service_unavailable``) with a ``retry`` of its ``Retry-After``: the client reconnects
with its ``Last-Event-ID`` once the store is back. ``lagged`` says the client fell behind and
missed ``skipped`` events.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from app.http.envelope import error_body, render_error
from app.http.request_context import credentials_of, services_of
from app.rest.routes import PlainRoute, permissions_of
from resolvers.framework.context import Credentials
from resolvers.framework.errors import CapabilityError
from resolvers.framework.registry import Registry
from resolvers.framework.services import Services
from resolvers.services.events.hub import Subscription, open_stream, watch
from schema.events import DocumentEvent

SERVES_LIKE = "documents.get"
PATH = "/v1/events"
# Asks an EventSource to reconnect after two seconds (it would wait three by default).
RETRY_MS = 2000
STREAM_HEADERS = {
    "Cache-Control": "no-store",
    # nginx would otherwise buffer the stream until its buffer fills.
    "X-Accel-Buffering": "no",
}


def sse_message(subscription_event_id: str, event_type: str, data: str) -> str:
    """One SSE message (``data`` is one line of JSON)."""
    return f"id: {subscription_event_id}\nevent: {event_type}\ndata: {data}\n\n"


async def sse_stream(
    subscription: Subscription, credentials: Credentials, services: Services
) -> AsyncIterator[str]:
    """The subscription as SSE text, a comment line as heartbeat, until it ends or the client
    leaves (Starlette then cancels this generator, and ``watch`` closes the subscription)."""
    yield f"retry: {RETRY_MS}\n: connected\n\n"
    try:
        async for event in watch(subscription, credentials, services):
            if event is None:
                yield ": keep-alive\n\n"
            else:
                # As documents.get answers on REST: absent fields omitted, unknown ones null.
                yield sse_message(event.id, event.type, event_json(event))
    except CapabilityError as exc:
        # The stream's authorization ended or changed, or the store went away: its last
        # message says why, as a failed call would (no id: Last-Event-ID stays the last event
        # delivered), then the stream ends.
        yield sse_error(exc)


def event_json(event: DocumentEvent) -> str:
    """An event as SSE data, serialized once for all of its workspace's streams (the hub
    hands the same event object to each)."""
    cached = event._serialized
    if cached is None:
        cached = event._serialized = event.model_dump_json(exclude_unset=True)
    return cached


def sse_error(exc: CapabilityError) -> str:
    """The ``error`` message a stream ends with: the REST failure envelope, and when waiting
    cures it how long to wait before reconnecting (``error.retryAfter`` in seconds, and SSE's
    ``retry`` in milliseconds, which ``EventSource`` obeys)."""
    body = error_body(exc)
    retry = ""
    if exc.retry_after is not None:
        body["error"]["retryAfter"] = exc.retry_after
        retry = f"retry: {exc.retry_after * 1000}\n"
    return f"{retry}event: error\ndata: {json.dumps(body, separators=(',', ':'))}\n\n"


def event_routes(registry: Registry) -> list[PlainRoute]:
    """``GET /v1/events``, where the registry has documents at all."""
    if registry.get(SERVES_LIKE) is None:
        return []

    async def stream_events(request: Request) -> Response:
        """The workspace's document events, as they happen (Server-Sent Events)."""
        credentials = credentials_of(request)
        services = services_of(request)
        after = request.headers.get("last-event-id") or request.query_params.get("after")
        try:
            _, subscription = await open_stream(credentials, services, after)
        except Exception as exc:
            return render_error(exc)
        return StreamingResponse(
            sse_stream(subscription, credentials, services),
            media_type="text/event-stream",
            headers=STREAM_HEADERS,
            # A client gone before the stream's first read never runs the generator's
            # clean-up: the subscription (and its place under the key's cap) ends here too.
            background=BackgroundTask(subscription.close),
        )

    return [
        PlainRoute(
            PATH,
            stream_events,
            operation_id="streamDocumentEvents",
            summary="The workspace's document events as they happen (Server-Sent Events)",
            tag="documents",
            permissions=permissions_of(registry, SERVES_LIKE),
            responses={
                "200": {
                    "description": "An endless text/event-stream: one message per event "
                    "(id, event: the type, data: the DocumentEvent as JSON), a comment line "
                    "as heartbeat; resume with Last-Event-ID",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}},
                }
            },
            query=(
                (
                    "after",
                    "Resume after this event id (like the Last-Event-ID header), while the "
                    "events are kept (24 hours)",
                ),
            ),
        )
    ]


__all__ = ["PATH", "event_routes", "sse_stream"]
