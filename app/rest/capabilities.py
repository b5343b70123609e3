"""Capability calls over HTTP: discovery, ``POST /v1/capabilities/{slug}``, ``GET
/v1/workspaces`` and ``GET /v1/documents/{id}`` (documents.get by path).

A face only parses, calls ``invoke()`` and renders; behaviour lives in the resolvers.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.http.envelope import EnvelopeResponse, render_error, success
from app.http.json_body import MalformedJson, parse_json
from app.http.request_context import credentials_of, services_of
from app.rest.routes import PlainRoute, permissions_of
from resolvers.framework.errors import BadRequest
from resolvers.framework.invoke import invoke, lookup
from resolvers.framework.registry import Registry


async def read_json_body(request: Request) -> Any:
    """The request's JSON body. Its size is bounded while it arrives (``app.http.body_limit``)."""
    raw = await request.body()
    if not raw.strip():
        raise BadRequest("Request body is required; send {} for a capability without parameters")
    try:
        return parse_json(raw)
    except MalformedJson as exc:
        raise BadRequest(str(exc)) from None


def discovery_item(spec: Any) -> dict[str, Any]:
    return {
        "name": spec.name,
        "slug": spec.slug,
        "description": spec.description,
        "permissions": list(spec.permissions),
        # Who may call it in the workspace (owner, admin, member); [] when no workspace role
        # is involved. An extension of the contract's discovery item.
        "roles": list(spec.allowed_roles),
        "inputSchema": spec.input.model_json_schema(),
    }


def capability_routes(registry: Registry) -> list[Route]:
    """``POST /v1/capabilities/{slug}``: every capability (described by ``app.rest.openapi``
    from the registry)."""

    async def call_capability(request: Request) -> Response:
        slug = request.path_params["slug"]
        try:
            lookup(registry, slug)  # an unknown slug is 404 before the body is even read
            body = await read_json_body(request)
            result = await invoke(
                registry, slug, body, credentials_of(request, body), services_of(request)
            )
        except Exception as exc:
            return render_error(exc)
        return success(result)

    return [Route("/v1/capabilities/{slug}", call_capability, methods=["POST"])]


def capability_gets(registry: Registry) -> list[PlainRoute]:
    """Discovery, ``GET /v1/workspaces`` and ``GET /v1/documents/{id}`` (fixed capability
    calls)."""
    listing = {"success": True, "capabilities": [discovery_item(spec) for spec in registry]}

    async def list_capabilities(request: Request) -> Response:
        return EnvelopeResponse(listing)

    async def respond(request: Request, slug: str, arguments: dict[str, Any]) -> Response:
        """A GET route that is a fixed capability call."""
        try:
            result = await invoke(
                registry, slug, arguments, credentials_of(request), services_of(request)
            )
        except Exception as exc:
            return render_error(exc)
        return success(result)

    async def list_workspaces(request: Request) -> Response:
        return await respond(request, "workspaces.list", {})

    async def get_document(request: Request) -> Response:
        """The target of a document's ``link``: documents.get by path."""
        return await respond(request, "documents.get", {"id": request.path_params["document_id"]})

    routes = [
        PlainRoute(
            "/v1/capabilities",
            list_capabilities,
            operation_id="listCapabilities",
            summary="Lists every capability with its JSON Schema input (no auth)",
            tag="discovery",
            public=True,
            needs_workspace=False,
            responses={"200": {"description": "The capability list"}},
        ),
    ]
    if registry.get("workspaces.list") is not None:
        routes.append(
            PlainRoute(
                "/v1/workspaces",
                list_workspaces,
                operation_id="listWorkspacesForKey",
                summary="Lists the workspaces allowed for the API key (workspaces.list)",
                tag="workspaces",
                capability="workspaces.list",
                permissions=permissions_of(registry, "workspaces.list"),
                needs_workspace=False,
            )
        )
    if registry.get("documents.get") is not None:
        routes.append(
            PlainRoute(
                "/v1/documents/{document_id}",
                get_document,
                operation_id="getDocumentByPath",
                summary="One document with full details: documents.get by path (a link's target)",
                tag="documents",
                capability="documents.get",
                permissions=permissions_of(registry, "documents.get"),
            )
        )
    return routes
