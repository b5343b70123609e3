"""What every face takes from an HTTP request before calling ``invoke()``: the caller's
credentials and the process's services.

REST and GraphQL use these today; the MCP and CLI faces (planned) build the same
``Credentials`` from their own transports.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import HTTPConnection

from app.credentials import org_id, take_api_key
from resolvers.context import Credentials, Services


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
