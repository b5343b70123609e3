"""One request-body limit for every face (REST, GraphQL, MCP): counted while the body arrives.

A face reads the body through ``receive``; this middleware counts the bytes as they come and
raises ``PayloadTooLarge`` from ``receive`` the moment the total passes the limit (at once when a
``Content-Length`` already says so), so no face ever holds more than the limit in memory, chunked
or not. Each face maps the error like any other (REST: the envelope; GraphQL: a GraphQL error),
and if one does not — the exception escapes, or the face answers with another status after the
limit was hit — the middleware answers 413 itself. Bytes the client still sends after the answer
are discarded by the server, never buffered.

A body past ``anonymous_bytes`` must come with a credential in the request's headers or query
that authenticates (``admits``), checked before those bytes are read: 16 MB bodies were read and
parsed before anyone said who sent them, and 40 at once added 600 MB (issue 35). Paths under
``exempt`` check their own secret before they read (the mail relay's door).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from resolvers.framework.errors import PayloadTooLarge


class BodySizeLimit:
    """Pure ASGI middleware: 413 for any HTTP request body over ``max_bytes``."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        too_large: Callable[[str], Response],
        anonymous_bytes: int | None = None,
        admits: Callable[[Scope], Awaitable[bool]] | None = None,
        exempt: tuple[str, ...] = (),
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.too_large = too_large
        self.anonymous_bytes = anonymous_bytes
        self.admits = admits
        self.exempt = exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes
        message = f"Request body exceeds {limit} bytes"
        declared = _content_length(scope)
        received = 0
        exceeded = False
        answered = False  # a response was started (by the face, or by us)
        replaced = False  # ours was sent instead of the face's
        # Past this many bytes the sender must have said who it is (None: no such bound).
        anonymous = self.anonymous_bytes
        if self.admits is None or scope["path"].startswith(self.exempt):
            anonymous = None

        async def known_sender() -> None:
            nonlocal anonymous, exceeded, message
            assert self.admits is not None and anonymous is not None
            if not await self.admits(scope):
                exceeded = True
                message = (
                    f"A request body over {anonymous} bytes needs a credential that "
                    "authenticates in its headers (Authorization: Bearer, X-Service-API-Key) "
                    "or query, checked before the body is read"
                )
                raise PayloadTooLarge(message)
            anonymous = None

        async def counted_receive() -> Message:
            nonlocal received, exceeded
            if declared is not None and declared > limit:
                exceeded = True
                raise PayloadTooLarge(message)
            if anonymous is not None and declared is not None and declared > anonymous:
                await known_sender()
            incoming = await receive()
            if incoming["type"] == "http.request":
                received += len(incoming.get("body", b""))
                if received > limit:
                    exceeded = True
                    raise PayloadTooLarge(message)
                if anonymous is not None and received > anonymous:
                    await known_sender()
            return incoming

        async def guarded_send(outgoing: Message) -> None:
            nonlocal answered, replaced
            if replaced:
                return  # the rest of the face's answer, which ours replaced
            if outgoing["type"] == "http.response.start":
                answered = True
                if exceeded and outgoing["status"] != 413:
                    # The face turned the error into another answer: the limit still wins.
                    replaced = True
                    await self._answer(scope, send, message)
                    return
            await send(outgoing)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except PayloadTooLarge:
            if answered:
                raise
            await self._answer(scope, send, message)

    async def _answer(self, scope: Scope, send: Send, message: str) -> None:
        response = self.too_large(message)
        await response(scope, _no_body, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            return int(text) if text.isdigit() else None
    return None


async def _no_body() -> Message:
    return {"type": "http.disconnect"}
