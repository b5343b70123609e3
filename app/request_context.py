"""What every face takes from an HTTP request before calling ``invoke()``: the caller's
credentials and the process's services.

REST and GraphQL use these; the MCP and CLI faces build the same ``Credentials`` from their
own transports. The plain routes that are not capabilities (file downloads, thumbnails, an
integration's connect link) authorize through ``workspace_context``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import HTTPConnection

from app.credentials import org_id, take_api_key
from resolvers.context import Context, Credentials, Services
from resolvers.invoke import authorize


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
