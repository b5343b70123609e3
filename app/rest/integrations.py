"""The browser side of connecting an accounting integration (OAuth 2.0 authorization code).

``GET /v1/integrations/{id}/connect`` (API key and workspace as for any call; owners and
admins) redirects to the provider's consent page; a client that asks for JSON
(``Accept: application/json``) gets ``{authorizationUrl}`` instead, to open it elsewhere.
The provider sends the browser back to ``GET /v1/integrations/{id}/callback``, which needs no
API key: the signed ``state`` names the workspace and the user who started the flow. A flow
started with ``?return=dashboard`` ends on the dashboard's Integrations page (a redirect when it
connected; a link on the page that says why it did not).
"""

from __future__ import annotations

import html

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from app.http.envelope import EnvelopeResponse, render_error
from app.http.request_context import services_of, workspace_context
from app.http.security_headers import page_headers
from app.rest.routes import HTML, PlainRoute, permissions_of
from engines.connectors.registry import CONNECTORS
from resolvers.framework.registry import Registry
from resolvers.services.connections import integration_connections

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{title}</title></head><body><h1>{title}</h1><p>{text}</p></body></html>"""


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


async def callback(request: Request) -> Response:
    integration_id = request.path_params["integration_id"]
    back = integration_connections.return_url(services_of(request), request.query_params)
    try:
        connection = await integration_connections.finish(
            services_of(request), integration_id, dict(request.query_params)
        )
    except Exception as exc:
        if _wants_json(request):
            return render_error(exc)
        failed = render_error(exc)
        text = html.escape(bytes(failed.body).decode("utf-8", "replace"))
        if back:
            text += f' <a href="{html.escape(back)}">Back to the dashboard</a>'
        return HTMLResponse(
            PAGE.format(title="Connection failed", text=text),
            status_code=failed.status_code,
            headers=page_headers(),
        )
    tenants = [{"id": t["id"], "name": t["name"]} for t in connection["tenants"]]
    if _wants_json(request):
        result = {"integrationId": integration_id, "status": "connected", "tenants": tenants}
        return EnvelopeResponse({"success": True, "code": 200, "data": {"result": result}})
    if back:
        return RedirectResponse(f"{back}?connected={integration_id}", status_code=303)
    names = ", ".join(t["name"] for t in tenants)
    return HTMLResponse(
        PAGE.format(
            title="Connected",
            text=html.escape(f"{integration_id} is connected ({names}). You can close this page."),
        ),
        headers=page_headers(),
    )


# Connecting sets up a workspace's integration as integrations.configure does: it needs that
# capability's scopes (owners and admins, checked by the service like the capability's roles).
CONFIGURES_LIKE = "integrations.configure"


def integration_routes(registry: Registry) -> list[PlainRoute]:
    """Connect and callback, where the registry has integrations at all."""
    if registry.get(CONFIGURES_LIKE) is None:
        return []
    permissions = permissions_of(registry, CONFIGURES_LIKE)

    async def connect(request: Request) -> Response:
        integration_id = request.path_params["integration_id"]
        try:
            ctx = await workspace_context(request, permissions)
            url = integration_connections.start(
                ctx, integration_id, request.query_params.get("return")
            )
        except Exception as exc:
            return render_error(exc)
        if _wants_json(request):
            body = {"success": True, "code": 200, "data": {"result": {"authorizationUrl": url}}}
            return EnvelopeResponse(body)
        return RedirectResponse(url, status_code=302)

    json_or_page = {
        "application/json": {
            "schema": {"type": "object", "description": "The success envelope (Accept: JSON)"}
        },
        **HTML,
    }
    return [
        PlainRoute(
            "/v1/integrations/{integration_id}/connect",
            connect,
            operation_id="connectIntegration",
            summary="Starts connecting an accounting integration: a redirect to the provider's "
            "consent page (JSON with its authorizationUrl when Accept asks for JSON)",
            tag="integrations",
            permissions=permissions,
            query=(
                (
                    "return",
                    "dashboard: the callback then sends the browser back to the dashboard's "
                    "Integrations page",
                ),
            ),
            responses={
                "200": {
                    "description": "{authorizationUrl} (Accept: application/json)",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
                "302": {
                    "description": "To the provider's consent page",
                    "headers": {"Location": {"schema": {"type": "string", "format": "uri"}}},
                },
            },
        ),
        PlainRoute(
            "/v1/integrations/{integration_id}/callback",
            callback,
            operation_id="integrationCallback",
            summary="Where the provider sends the browser back; the signed state names the "
            "workspace and user, so no API key is needed",
            tag="integrations",
            public=True,
            needs_workspace=False,
            query=(
                ("code", "The provider's authorization code"),
                ("state", "The signed state the connect step sent"),
                ("error", "The provider's refusal, when the user declined"),
                # What a provider adds to its redirect, as its declaration says.
                *(
                    (parameter.name, parameter.description)
                    for connector in CONNECTORS
                    for parameter in connector.callback_parameters
                ),
            ),
            responses={
                "200": {"description": "Connected (a page, or JSON)", "content": json_or_page},
            },
            error_content={
                "application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}},
                **HTML,
            },
        ),
    ]
