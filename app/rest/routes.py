"""The REST routes besides ``POST /v1/capabilities/{slug}``, each declared once: the route is
mounted from the declaration and ``/openapi.json`` describes it from the same declaration
(``app.rest.openapi``), so no route serves what the description leaves out.

A route that is a fixed capability call (``GET /v1/documents/{id}`` is documents.get) names the
capability; one that acts like it (a file of a document needs what documents.get needs) takes
that capability's ``permissions``; the rest declare their own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from resolvers.framework.registry import Registry

Endpoint = Callable[[Request], Awaitable[Response]]
BINARY = {"schema": {"type": "string", "format": "binary"}}
HTML = {"text/html": {"schema": {"type": "string"}}}


@dataclass(frozen=True)
class PlainRoute:
    """One ``GET`` route of the API and what its description says about it."""

    path: str  # as mounted, under /v1: "/v1/files/{document_id}"
    endpoint: Endpoint
    operation_id: str
    summary: str
    tag: str
    # The scopes a caller needs (from the capability whose data it serves, where there is one).
    permissions: tuple[str, ...] = ()
    # A fixed call of this capability: its output model is the success envelope's result.
    capability: str | None = None
    # Answers besides the error envelopes: status → OpenAPI response object.
    responses: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    query: tuple[tuple[str, str], ...] = ()  # (name, description) of its query parameters
    needs_workspace: bool = True
    # No credential: the integration callback (its signed state names workspace and user).
    public: bool = False
    # What its errors are sent as, where not the envelope (a page for a browser, or JSON).
    error_content: Mapping[str, Any] | None = None

    def route(self) -> Route:
        return Route(self.path, self.endpoint, methods=["GET"])

    @property
    def described_path(self) -> str:
        """The path as ``/openapi.json`` names it (relative to its one server, ``…/v1``)."""
        return self.path.removeprefix("/v1")


def permissions_of(registry: Registry, slug: str) -> tuple[str, ...]:
    """The scopes capability ``slug`` declares, for a route that serves what it serves."""
    spec = registry.get(slug)
    if spec is None:
        raise LookupError(f"a route serves what {slug} serves, but the registry lacks it")
    return spec.permissions
