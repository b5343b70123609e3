"""The browser side of connecting an accounting integration (OAuth 2.0 authorization code).

``GET /v1/integrations/{id}/connect`` (API key and workspace as for any call; owners and
admins) redirects to the provider's consent page; a client that asks for JSON
(``Accept: application/json``) gets ``{authorizationUrl}`` instead, to open it elsewhere.
The provider sends the browser back to ``GET /v1/integrations/{id}/callback``, which needs no
API key: the signed ``state`` names the workspace and the user who started the flow.
"""

from __future__ import annotations

import html

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from app.request_context import services_of, workspace_context
from app.rest import EnvelopeResponse, render_error
from app.security_headers import page_headers
from resolvers import integration_connections

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"""


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


async def connect(request: Request) -> Response:
    integration_id = request.path_params["integration_id"]
    try:
        ctx = await workspace_context(request, ("write_integrations",))
        url = integration_connections.start(ctx, integration_id)
    except Exception as exc:
        return render_error(exc)
    if _wants_json(request):
        body = {"success": True, "code": 200, "data": {"result": {"authorizationUrl": url}}}
        return EnvelopeResponse(body)
    return RedirectResponse(url, status_code=302)


async def callback(request: Request) -> Response:
    integration_id = request.path_params["integration_id"]
    try:
        connection = await integration_connections.finish(
            services_of(request), integration_id, dict(request.query_params)
        )
    except Exception as exc:
        if _wants_json(request):
            return render_error(exc)
        failed = render_error(exc)
        text = bytes(failed.body).decode("utf-8", "replace")
        return HTMLResponse(
            PAGE.format(title="Connection failed", text=html.escape(text)),
            status_code=failed.status_code,
            headers=page_headers(),
        )
    tenants = [{"id": t["id"], "name": t["name"]} for t in connection["tenants"]]
    if _wants_json(request):
        result = {"integrationId": integration_id, "status": "connected", "tenants": tenants}
        return EnvelopeResponse({"success": True, "code": 200, "data": {"result": result}})
    names = ", ".join(t["name"] for t in tenants)
    return HTMLResponse(
        PAGE.format(
            title="Connected",
            text=html.escape(f"{integration_id} is connected ({names}). You can close this page."),
        ),
        headers=page_headers(),
    )


def integration_routes() -> list[Route]:
    return [
        Route("/v1/integrations/{integration_id}/connect", connect, methods=["GET"]),
        Route("/v1/integrations/{integration_id}/callback", callback, methods=["GET"]),
    ]
