"""The face for people: the landing page, the API reference and the dashboard.

The dashboard (``/app/``) is a single-page app of plain JavaScript modules in
``app/web/dashboard`` (no build step, nothing fetched from elsewhere at run time). It talks
only to the public API: GraphQL for everything it shows and changes, and the OAuth endpoints to
sign in. Every page here is sent with a Content-Security-Policy that allows scripts and styles
from this server only (no inline script), so an injected value can never run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from app.http.security_headers import page_headers
from app.web.pages import api_reference_page, landing_page
from resolvers.framework.registry import Registry

DASHBOARD_DIR = Path(__file__).parent / "dashboard"
ASSET_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".html": "text/html; charset=utf-8",
}
# Scripts, styles and data from this server only; thumbnails arrive as blob: URLs (fetched
# with the Authorization header, so no key ever sits in an image URL).
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = page_headers(CSP)


def secured(response: Response) -> Response:
    response.headers.update(SECURITY_HEADERS)
    return response


def dashboard_assets(directory: Path = DASHBOARD_DIR) -> dict[str, Path]:
    """The files the dashboard may serve, by name: fixed at start-up, so no request path ever
    reaches the disk."""
    return {
        path.name: path
        for path in sorted(directory.iterdir())
        if path.is_file() and path.suffix in ASSET_TYPES
    }


def web_routes(registry: Registry, openapi: dict[str, Any]) -> list[Route]:
    """``/``, ``/api``, ``/app/`` with its assets, the favicon."""
    landing = landing_page(len(list(registry)))
    # The reference is a function of the registry and the OpenAPI document's address: made
    # once per process for a frozen registry (``Registry.derived``), not for every app.
    address = (openapi.get("servers") or [{}])[0].get("url", "")
    reference = registry.derived(
        ("api reference page", address), lambda: api_reference_page(openapi)
    )
    assets = dashboard_assets()
    index_html = assets["index.html"].read_text(encoding="utf-8")

    async def home(request: Request) -> Response:
        return secured(HTMLResponse(landing))

    async def api_reference(request: Request) -> Response:
        return secured(HTMLResponse(reference))

    async def dashboard(request: Request) -> Response:
        # The app's own routes live in the fragment (#/documents), so this one page serves all.
        return secured(HTMLResponse(index_html, headers={"Cache-Control": "no-cache"}))

    async def to_dashboard(request: Request) -> Response:
        return RedirectResponse("/app/", status_code=308)

    async def favicon(request: Request) -> Response:
        # Browsers ask for /favicon.ico on every page without a <link rel="icon">: the same SVG.
        return secured(
            FileResponse(
                assets["favicon.svg"],
                media_type=ASSET_TYPES[".svg"],
                headers={"Cache-Control": "public, max-age=86400"},
            )
        )

    async def asset(request: Request) -> Response:
        path = assets.get(request.path_params["name"])
        if path is None or path.name == "index.html":
            return secured(Response("Not found", status_code=404, media_type="text/plain"))
        return secured(
            FileResponse(
                path,
                media_type=ASSET_TYPES[path.suffix],
                # Assets change with the release only; revalidation is a cheap 304.
                headers={"Cache-Control": "no-cache"},
            )
        )

    routes = [
        Route("/", home, methods=["GET"]),
        Route("/api", api_reference, methods=["GET"]),
        Route("/app", to_dashboard, methods=["GET"]),
        Route("/app/", dashboard, methods=["GET"]),
        Route("/app/assets/{name}", asset, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Route("/favicon.svg", favicon, methods=["GET"]),
    ]
    return routes
