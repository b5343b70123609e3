"""The REST face: capability calls over HTTP, the plain ``GET`` routes of the API (documents,
files and their thumbnails, connecting an accounting integration, live document events), and
``/openapi.json``
generated from the registry.

``rest_routes`` is everything this face mounts; the composition root (``app.host.main``) builds
the OpenAPI document once and hands it in.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.rest.capabilities import capability_gets, capability_routes
from app.rest.events import event_routes
from app.rest.files import file_routes
from app.rest.integrations import integration_routes
from app.rest.openapi import build_openapi
from app.rest.routes import PlainRoute
from resolvers.framework.registry import Registry

__all__ = ["build_openapi", "plain_routes", "rest_routes"]


def plain_routes(registry: Registry) -> tuple[PlainRoute, ...]:
    """The declared ``GET`` routes of the API (mounted and described from the declarations),
    made once per registry (``Registry.derived``): the REST face mounts them, the OpenAPI
    document describes them."""
    return registry.derived(
        "plain routes",
        lambda: (
            *capability_gets(registry),
            *file_routes(registry),
            *integration_routes(registry),
            *event_routes(registry),
        ),
    )


def rest_routes(registry: Registry, openapi: dict[str, Any]) -> list[Route]:
    """Every route of the REST face, the most called first (the router tries them in order)."""

    async def openapi_json(request: Request) -> Response:
        return JSONResponse(openapi)

    return [
        *capability_routes(registry),
        *(plain.route() for plain in plain_routes(registry)),
        Route("/openapi.json", openapi_json, methods=["GET"]),
    ]
