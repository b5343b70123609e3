"""What every face takes from an HTTP request before calling ``invoke()``: the caller's
credentials and the process's services.

REST and GraphQL use these; the MCP and CLI faces build the same ``Credentials`` from their
own transports. The plain routes that are not capabilities (file downloads, thumbnails, an
integration's connect link) authorize through ``workspace_context``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import HTTPConnection, Request
from starlette.types import Message, Receive

from app.http.credentials import org_id, take_api_key
from resolvers.framework.context import Context, Credentials
from resolvers.framework.invoke import authorize
from resolvers.framework.services import Services
from resolvers.services.auth.client_addresses import TrustedProxies, address_key


def credentials_of(conn: HTTPConnection, body: Any = None) -> Credentials:
    """The API key (headers, query, or the body's ``apiKey``), workspace and request id."""
    return Credentials(
        api_key=take_api_key(conn, body),
        org_id=org_id(conn),
        request_id=conn.scope.get("state", {}).get("request_id", ""),
    )


def services_of(conn: HTTPConnection) -> Services:
    """The long-lived services the app factory built for this process."""
    services: Services = conn.app.state.services
    return services


async def workspace_context(conn: HTTPConnection, permissions: tuple[str, ...]) -> Context:
    """Authenticate the request and resolve its workspace for a plain route, with the same
    401/400/403 answers as a capability call needing ``permissions``."""
    return await authorize(
        credentials_of(conn), services_of(conn), permissions, needs_workspace=True
    )


def client_address(conn: HTTPConnection) -> str:
    """The digest the throttles count this request's client address under: the peer, or
    behind a proxy named in ``FINCAP_TRUSTED_PROXIES`` the client it forwarded for."""
    peer = conn.client.host if conn.client else None
    proxies: TrustedProxies | None = getattr(conn.app.state, "trusted_proxies", None)
    if proxies is not None and proxies.networks:
        peer = proxies.client(peer, conn.headers.get("x-forwarded-for"))
    return address_key(peer)


async def bounded_body(request: Request, limit: int) -> bytes | None:
    """The request body, or None as soon as more than ``limit`` bytes arrived (the rest is
    never read into memory)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands an already-read body to the next reader, then the
    connection's own messages (a client disconnect still reaches it)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
