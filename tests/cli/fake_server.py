"""A small HTTP server on a real socket that speaks fincap's discovery and envelope shapes.

It lists capabilities the CLI does not ship (a newer server), records every request body it
receives, and answers each slug as the test tells it to (result or error status).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp

from resolvers.framework.errors import reason_for_status
from tests.live import app_in_thread

GADGET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1, "description": "What to call it"},
        "size": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
        "price": {"anyOf": [{"type": "number"}, {"type": "string"}], "description": "Money"},
        "ratio": {"type": "number"},
        "colour": {"enum": ["red", "green"], "type": "string"},
        "order": {"enum": [1, -1], "type": "integer", "default": -1},
        "enabled": {"type": "boolean", "default": True},
        "tags": {"type": "array", "items": {"type": "string"}},
        "kinds": {"type": "array", "items": {"enum": ["a", "b"], "type": "string"}},
        "spec": {"$ref": "#/$defs/Spec"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    },
    "$defs": {"Spec": {"type": "object", "properties": {"x": {"type": "integer"}}}},
}
LISTING = [
    {
        "name": "gadgetsFrobnicate",
        "slug": "gadgets.frobnicate",
        "description": "Frobnicates a gadget.\n\nA capability only this server has.",
        "permissions": ["all"],
        "inputSchema": GADGET_SCHEMA,
    },
    {
        "name": "gadgetsGet",
        "slug": "gadgets.get",
        "description": "One gadget by its id.",
        "permissions": ["all"],
        "inputSchema": {
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": "string"}, "fields": {"type": "string"}},
        },
    },
]


@dataclass
class FakeServer:
    """What the fake saw, and how it answers (slug → (status, result or message))."""

    url: str = ""
    bodies: list[tuple[str, Any, dict[str, str]]] = field(default_factory=list)
    # slug → (status, result or error message[, error.reason]); the reason defaults to the
    # status's, as the service names it.
    answers: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    # slug → the Retry-After its error answer carries
    retry_after: dict[str, int] = field(default_factory=dict)

    def app(self) -> Starlette:
        async def capabilities(request: Request) -> JSONResponse:
            return JSONResponse({"success": True, "capabilities": LISTING})

        async def call(request: Request) -> JSONResponse:
            slug = request.path_params["slug"]
            body = await request.json()
            self.bodies.append((slug, body, dict(request.headers)))
            status, answer, *named = self.answers.get(slug, (200, {"echo": body}))
            if status == 200:
                return JSONResponse({"success": True, "code": 200, "data": {"result": answer}})
            reason = named[0] if named else reason_for_status(status)
            error = {"errorCode": status, "errorMessage": answer, "reason": reason}
            headers = (
                {"Retry-After": str(self.retry_after[slug])} if slug in self.retry_after else {}
            )
            return JSONResponse(
                {"success": False, "code": status, "error": error},
                status_code=status,
                headers=headers,
            )

        return Starlette(
            routes=[
                Route("/v1/capabilities", capabilities, methods=["GET"]),
                Route("/v1/capabilities/{slug}", call, methods=["POST"]),
            ]
        )


@contextmanager
def running_fake() -> Iterator[FakeServer]:
    fake = FakeServer()

    async def setup(port: int) -> tuple[ASGIApp, None]:
        return fake.app(), None

    with app_in_thread(setup, ready_path=None, log_level="error") as served:
        fake.url = served.base
        yield fake
