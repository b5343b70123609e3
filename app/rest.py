"""The REST face: discovery, ``POST /v1/capabilities/{slug}``, ``GET /v1/workspaces``.

A face only parses, calls ``invoke()`` and renders; behaviour lives in the resolvers.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from app.json_body import MalformedJson, parse_json
from app.request_context import credentials_of, services_of, workspace_context
from app.security_headers import file_headers
from resolvers.errors import BadRequest, CapabilityError, TooManyRequests
from resolvers.files import open_original
from resolvers.invoke import invoke, lookup
from resolvers.registry import Registry

log = logging.getLogger("fincap.rest")


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


def failure(status: int, message: str) -> Response:
    return EnvelopeResponse(
        {"success": False, "code": status, "error": {"errorCode": status, "errorMessage": message}},
        status_code=status,
    )


def render_error(exc: Exception) -> Response:
    """A capability error as its envelope; anything else as a 500 that reveals nothing."""
    if isinstance(exc, CapabilityError) and exc.exposed:
        response = failure(exc.status, exc.message)
        if isinstance(exc, TooManyRequests):
            response.headers["Retry-After"] = str(exc.retry_after)
        return response
    log.error("unhandled error", exc_info=exc)
    return failure(500, "Internal server error")


async def read_json_body(request: Request) -> Any:
    """The request's JSON body. Its size is bounded while it arrives (``app.body_limit``)."""
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


def rest_routes(registry: Registry) -> list[Route]:
    """Routes of the REST face for one frozen registry."""
    listing = {"success": True, "capabilities": [discovery_item(spec) for spec in registry]}

    async def list_capabilities(request: Request) -> Response:
        return EnvelopeResponse(listing)

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

    async def get_original(request: Request) -> Response:
        """The original upload of a document, streamed (authenticated, workspace-scoped)."""
        try:
            ctx = await workspace_context(request, ("read_documents",))
            file_ref, chunks = await open_original(ctx, request.path_params["document_id"])
        except Exception as exc:
            return render_error(exc)
        media_type, headers = file_headers(file_ref["fileName"], file_ref["mimeType"])
        return StreamingResponse(
            chunks,
            media_type=media_type,
            headers={
                **headers,
                "Content-Length": str(file_ref["size"]),
                "ETag": f'"{file_ref["sha256"]}"',
                "Cache-Control": "private, max-age=3600",
            },
        )

    routes = [
        # First: the most called route (the router tries them in order).
        Route("/v1/capabilities/{slug}", call_capability, methods=["POST"]),
        Route("/v1/capabilities", list_capabilities, methods=["GET"]),
        Route("/v1/workspaces", list_workspaces, methods=["GET"]),
    ]
    if registry.get("documents.get") is not None:
        routes.append(Route("/v1/documents/{document_id}", get_document, methods=["GET"]))
        routes.append(Route("/v1/files/{document_id}", get_original, methods=["GET"]))
    return routes
