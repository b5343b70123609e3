"""Pull the API key and workspace out of an HTTP request, in the spec's order of forms."""

from __future__ import annotations

from typing import Any

from starlette.requests import HTTPConnection

ORG_HEADER = "x-service-org-id"


def api_key_from_headers(conn: HTTPConnection) -> str | None:
    """``Authorization: Bearer`` first, then ``X-Service-API-Key``, then ``x-api-key``."""
    authorization = conn.headers.get("authorization", "")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    for header in ("x-service-api-key", "x-api-key"):
        if value := conn.headers.get(header, "").strip():
            return value
    return None


def take_api_key(conn: HTTPConnection, body: Any = None) -> str | None:
    """The key from headers, else ``?apiKey=``, else the body's ``apiKey``.

    The body's ``apiKey`` is removed in every case so it never reaches input validation
    (where it would be an unknown property).
    """
    from_body = body.pop("apiKey", None) if isinstance(body, dict) else None
    key = api_key_from_headers(conn) or conn.query_params.get("apiKey") or from_body
    return key if isinstance(key, str) else None


def org_id(conn: HTTPConnection) -> str | None:
    return conn.headers.get(ORG_HEADER) or None
