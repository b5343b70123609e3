"""The OAuth 2.1 face: metadata, registration, authorization pages, token and revocation.

The MCP SDK's handlers serve registration (RFC 7591) and the token endpoint, each mounted on
fincap's own paths under ``/v1/oauth``; ``resolvers.services.auth.oauth.AuthorizationServer`` is the
provider behind them. fincap's part: the bounds and rate limit in front of registration
(``resolvers.services.auth.oauth_registration``), the authorization request (checked with the SDK's
request model; an invalid one shows a page and never redirects, RFC 9700 §4.11.2), the resource a
grant is for (RFC 8707), revocation for public clients, the dashboard's first-party client
(``dashboard_client``: it never registers), and the pages a person sees between the client's
redirect and the code: sign in (throttled), choose the workspace, consent.

The forms' protection is ``app.oauth.forms``; the paths and metadata are
``app.oauth.metadata``.
"""

from __future__ import annotations

import json
import secrets
import time

from mcp.server.auth.errors import stringify_pydantic_error
from mcp.server.auth.handlers.authorize import AuthorizationRequest
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import AuthorizationParams, construct_redirect_uri
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.shared.auth import (
    InvalidRedirectUriError,
    InvalidScopeError,
)
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from app.http.json_body import MalformedJson, parse_json
from app.http.request_context import bounded_body, client_address, replay, services_of
from app.oauth.forms import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    SESSION_SECONDS,
    cookie_options,
    csrf_ok,
    csrf_token,
    form_fields,
    html,
    session_user,
)
from app.oauth.metadata import (
    AUTHORIZE_PATH,
    CONSENT_PATH,
    DASHBOARD_CLIENT_PATH,
    MCP_PATH,
    REGISTER_PATH,
    REVOKE_PATH,
    SIGN_IN_LINK_PATH,
    SIGN_IN_PATH,
    TOKEN_PATH,
    authorization_server_metadata,
    issuer,
    protected_resource_metadata,
)
from app.oauth.pages import consent_page, destination_of, problem_page, sign_in_page
from resolvers import default_registry
from resolvers.framework.access_tokens import FincapAccessToken, FincapRefreshToken, resource_covers
from resolvers.framework.registry import SCOPES
from resolvers.services.auth.oauth import (
    AuthorizationServer,
    PendingRequest,
    canonical_resource,
    sign_in,
)
from resolvers.services.auth.oauth_first_party import (
    DASHBOARD_CLIENT_ID,
    DASHBOARD_SCOPES,
    dashboard_redirect_uri,
    dashboard_scopes,
    dashboard_workspace,
)
from resolvers.services.auth.oauth_registration import (
    MAX_REGISTRATION_BYTES,
    RegistrationRefused,
    RegistrationThrottled,
    admit_registration,
    check_metadata,
)
from resolvers.services.auth.sign_in_links import LINK_REFUSED, redeem
from resolvers.services.auth.sign_in_throttle import SignInThrottled

NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def authorization_server(request: Request) -> AuthorizationServer:
    services = services_of(request)
    return AuthorizationServer(
        services.store,
        services.keyring,
        SIGN_IN_PATH,
        client_address=client_address(request),
        base_url=issuer(request),
    )


# -- pages --------------------------------------------------------------------------------


async def show_sign_in(request: Request) -> Response:
    """GET: the sign-in page (or, already signed in, the consent page)."""
    server = authorization_server(request)
    sealed = request.query_params.get("request", "")
    pending = server.unseal(sealed)
    if pending is None:
        return html(problem_page("Request expired", EXPIRED), 400)
    cookie = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
    user_id = session_user(server.keyring, request)
    if user_id is not None:
        response = await consent_or_remembered(request, server, pending, sealed, cookie, user_id)
    else:
        response = html(
            sign_in_page(
                action=SIGN_IN_PATH,
                request=sealed,
                csrf=csrf_token(server.keyring, cookie, sealed),
                client=client_label(pending),
            )
        )
    response.set_cookie(CSRF_COOKIE, cookie, max_age=SESSION_SECONDS, **cookie_options(request))
    return response


EXPIRED = (
    "This sign-in link is invalid or has expired. Go back to the application and connect again."
)
FORGED = "The form was sent from another page or has expired. Start again from the application."


def client_label(pending: PendingRequest) -> str:
    return pending.client_name or pending.client_id


async def checked_form(
    request: Request, server: AuthorizationServer
) -> tuple[dict[str, str], str, PendingRequest] | Response:
    """A posted page's fields, its sealed and its unsealed pending request; or the page that
    says why the form cannot be used (expired or forged request, CSRF token not matching)."""
    fields = await form_fields(request)
    sealed = fields.get("request", "")
    pending = server.unseal(sealed)
    if pending is None:
        return html(problem_page("Request expired", EXPIRED), 400)
    if not csrf_ok(server.keyring, request, fields.get("csrf", ""), sealed):
        return html(problem_page("Form expired", FORGED), 403)
    return fields, sealed, pending


async def submit_sign_in(request: Request) -> Response:
    """POST: check email and password, then show the consent page."""
    server = authorization_server(request)
    form = await checked_form(request, server)
    if isinstance(form, Response):
        return form
    fields, sealed, pending = form
    cookie = request.cookies[CSRF_COOKIE]
    email = fields.get("email", "").strip()

    def again(error: str, status: int) -> HTMLResponse:
        return html(
            sign_in_page(
                action=SIGN_IN_PATH,
                request=sealed,
                csrf=csrf_token(server.keyring, cookie, sealed),
                client=client_label(pending),
                email=email,
                error=error,
            ),
            status,
        )

    try:
        user = await sign_in(
            services_of(request).store, email, fields.get("password", ""), client_address(request)
        )
    except SignInThrottled as exc:
        refused = again(
            f"Too many failed sign-ins. Try again in {exc.retry_after} seconds "
            f"(after {exc.until:%H:%M:%S} UTC).",
            429,
        )
        refused.headers["Retry-After"] = str(exc.retry_after)
        return refused
    if user is None:
        return again(
            "That email and password do not match an account. No password yet? The operator "
            "sets one with: fincap admin set-password --email you@example.com (or gives you a "
            "one-time sign-in link: fincap admin sign-in-link --email you@example.com)",
            401,
        )
    response = await consent_or_remembered(request, server, pending, sealed, cookie, user["_id"])
    open_session(request, server, response, user["_id"])
    return response


def open_session(
    request: Request, server: AuthorizationServer, response: Response, user_id: str
) -> None:
    """The sign-in page's session in this browser (a signed cookie): what a password, or a
    one-time link, opens."""
    session = json.dumps({"user": user_id, "exp": int(time.time()) + SESSION_SECONDS})
    response.set_cookie(
        SESSION_COOKIE,
        server.keyring.sign("oauth-session", session.encode()),
        max_age=SESSION_SECONDS,
        **cookie_options(request),
    )


async def sign_in_link(request: Request) -> Response:
    """POST ``{"token": "sil_…"}`` (the dashboard, from a one-time link's fragment): consumes
    the link and opens the sign-in session of its person, bound to its workspace. JSON only, so
    another site's form cannot post it (no CORS is offered). A used, expired or unknown link:
    410 with what to do instead."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return JSONResponse(
            {"error": "invalid_request", "error_description": 'send JSON: {"token": …}'},
            415,
            NO_STORE,
        )
    body = await bounded_body(request, 1024)
    try:
        fields = parse_json(body) if body is not None else None
    except MalformedJson:
        fields = None
    token = fields.get("token") if isinstance(fields, dict) else None
    if not isinstance(token, str) or not token:
        return JSONResponse(
            {"error": "invalid_request", "error_description": "token: a sign-in link's token"},
            400,
            NO_STORE,
        )
    record = await redeem(services_of(request).store, token)
    if record is None:
        return JSONResponse(
            {"error": "invalid_grant", "error_description": LINK_REFUSED}, 410, NO_STORE
        )
    answer = JSONResponse({"signedIn": True}, headers=NO_STORE)
    open_session(request, authorization_server(request), answer, record["userId"])
    return answer


async def consent_or_remembered(
    request: Request,
    server: AuthorizationServer,
    pending: PendingRequest,
    sealed: str,
    cookie: str,
    user_id: str,
) -> Response:
    """The consent page, or straight back to the client with a code when this user already
    allowed this client these scopes (or more) and is still a member of that workspace (unless
    the client asked with ``prompt=consent``, OpenID Connect Core §3.1.2.1: to choose again).
    The dashboard never asks for consent (it is the person): it goes back at once to the
    workspace last chosen or the only one; the page is shown only to choose a workspace."""
    store = server.store
    if pending.client_id == DASHBOARD_CLIENT_ID:
        chosen = None if pending.ask_consent else await dashboard_workspace(store, user_id)
        if chosen is not None:
            return await back_with_code(request, server, pending, user_id, chosen)
        return await render_consent(request, server, pending, sealed, cookie, user_id)
    remembered = await store.oauth_consents.find(user_id, pending.client_id)
    if (
        not pending.ask_consent
        and remembered is not None
        and set(pending.scopes or []) <= set(remembered["scopes"])
        and await store.workspaces.role_of(user_id, remembered["workspaceId"]) is not None
    ):
        return await back_with_code(request, server, pending, user_id, remembered["workspaceId"])
    return await render_consent(request, server, pending, sealed, cookie, user_id)


async def back_with_code(
    request: Request,
    server: AuthorizationServer,
    pending: PendingRequest,
    user_id: str,
    workspace_id: str,
) -> RedirectResponse:
    """To the client's redirect URI with a code for ``workspace_id``: the scopes it asked for,
    or, for the dashboard, those of them the person's role there allows."""
    scopes = None
    if pending.client_id == DASHBOARD_CLIENT_ID:
        registry = services_of(request).registry or default_registry()
        role = await server.store.workspaces.role_of(user_id, workspace_id)
        scopes = dashboard_scopes(registry, list(pending.scopes or []), role)
    code = await server.grant_code(pending, user_id, workspace_id, scopes)
    target = construct_redirect_uri(str(pending.redirect_uri), code=code, state=pending.state)
    return RedirectResponse(target, status_code=303)


async def render_consent(
    request: Request,
    server: AuthorizationServer,
    pending: PendingRequest,
    sealed: str,
    cookie: str,
    user_id: str,
    error: str = "",
) -> HTMLResponse:
    store = server.store
    user = await store.users.get(user_id)
    workspaces = await store.workspaces.list_for_user(user_id)
    return html(
        consent_page(
            action=CONSENT_PATH,
            request=sealed,
            csrf=csrf_token(server.keyring, cookie, sealed),
            client=client_label(pending),
            destination=destination_of(str(pending.redirect_uri)),
            email=(user or {}).get("email", ""),
            scopes=list(pending.scopes or []),
            workspaces=[
                {"id": w["_id"], "name": w.get("name", ""), "role": w.get("role", "")}
                for w in workspaces
            ],
            error=error,
        ),
        400 if error else 200,
        redirect_to=str(pending.redirect_uri),
    )


async def submit_consent(request: Request) -> Response:
    """POST: the user allowed (a code for the client) or denied (access_denied)."""
    server = authorization_server(request)
    form = await checked_form(request, server)
    if isinstance(form, Response):
        return form
    fields, sealed, pending = form
    user_id = session_user(server.keyring, request)
    if user_id is None:
        return html(problem_page("Signed out", "Your sign-in has expired. " + EXPIRED), 401)
    redirect_uri = str(pending.redirect_uri)
    if fields.get("decision") != "allow":
        target = construct_redirect_uri(
            redirect_uri,
            error="access_denied",
            error_description="the user denied the request",
            state=pending.state,
        )
        return RedirectResponse(target, status_code=303)
    workspace_id = fields.get("workspace", "")
    if await server.store.workspaces.role_of(user_id, workspace_id) is None:
        cookie = request.cookies[CSRF_COOKIE]
        return await render_consent(
            request, server, pending, sealed, cookie, user_id, "Choose one of your workspaces."
        )
    answer = await back_with_code(request, server, pending, user_id, workspace_id)
    await server.store.oauth_consents.remember(
        user_id, pending.client_id, workspace_id, list(pending.scopes or [])
    )
    return answer


# -- authorization, registration, token ------------------------------------------------


def refused_authorization(error: str, description: str) -> HTMLResponse:
    """An invalid authorization request: a page, never a redirect (RFC 9700 §4.11.2; RFC 6749
    §4.1.2.1 for an unknown client or redirect URI). Whoever sent the browser here learns
    nothing, and the browser goes nowhere it was not going already."""
    return html(
        problem_page(
            "This sign-in link cannot be used",
            f"The application asked for something this server does not grant ({error}: "
            f"{description}). Nothing was shared. Go back to the application and connect "
            "again, or tell its makers.",
        ),
        400,
    )


async def authorize(request: Request) -> Response:
    """RFC 6749 §4.1.1 with PKCE S256 (the SDK's request model and client checks): a valid
    request goes on to the sign-in page, carrying its parameters sealed."""
    params = request.query_params if request.method == "GET" else await request.form()
    repeated = sorted({key for key, _ in params.multi_items() if len(params.getlist(key)) > 1})
    if repeated:
        return refused_authorization("invalid_request", f"{', '.join(repeated)} sent twice")
    try:
        parsed = AuthorizationRequest.model_validate(dict(params))
    except ValidationError as exc:
        return refused_authorization("invalid_request", stringify_pydantic_error(exc))
    server = authorization_server(request)
    client = await server.get_client(parsed.client_id)
    if client is None:
        return refused_authorization("invalid_request", "this application is not registered")
    try:
        redirect_uri = client.validate_redirect_uri(parsed.redirect_uri)
        scopes = client.validate_scope(parsed.scope)
    except (InvalidRedirectUriError, InvalidScopeError) as exc:
        kind = "invalid_scope" if isinstance(exc, InvalidScopeError) else "invalid_request"
        return refused_authorization(kind, exc.message)
    base = issuer(request)
    resource = canonical_resource(parsed.resource or base)
    if not resource_covers(canonical_resource(base), resource):
        return refused_authorization(
            "invalid_target", f"this server grants access to {base} only, not {parsed.resource}"
        )
    prompt = params.get("prompt", "")
    if prompt not in ("", "consent"):
        # OpenID Connect's other prompts (none, login, select_account) are not offered.
        return refused_authorization("invalid_request", f"prompt={prompt} is not supported")
    target = await server.authorize(
        client,
        AuthorizationParams(
            state=parsed.state,
            scopes=scopes,
            code_challenge=parsed.code_challenge,
            redirect_uri=redirect_uri,
            redirect_uri_provided_explicitly=parsed.redirect_uri is not None,
            resource=resource,
        ),
        ask_consent=prompt == "consent",
    )
    return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})


async def register(request: Request) -> Response:
    """RFC 7591 behind fincap's bounds: the rate limit per address (429), the body size before
    parsing (413), the metadata's sizes (400); then the SDK's handler."""
    services = services_of(request)
    try:
        await admit_registration(
            services.store, client_address(request), services.registration_holds
        )
    except RegistrationThrottled as exc:
        return JSONResponse(
            {"error": "too_many_requests", "error_description": str(exc)},
            429,
            {**NO_STORE, "Retry-After": str(exc.retry_after)},
        )
    body = await bounded_body(request, MAX_REGISTRATION_BYTES)
    if body is None:
        return JSONResponse(
            {
                "error": "invalid_client_metadata",
                "error_description": f"a registration is at most {MAX_REGISTRATION_BYTES} bytes",
            },
            413,
            NO_STORE,
        )
    try:
        check_metadata(parse_json(body))
    except MalformedJson:
        pass  # the SDK answers invalid_client_metadata
    except RegistrationRefused as exc:
        return JSONResponse(
            {"error": "invalid_client_metadata", "error_description": str(exc)}, 400, NO_STORE
        )
    options = ClientRegistrationOptions(
        enabled=True, valid_scopes=list(SCOPES), default_scopes=list(SCOPES)
    )
    replayed = Request(request.scope, replay(body, request.receive))
    return await RegistrationHandler(authorization_server(request), options).handle(replayed)


async def token(request: Request) -> Response:
    """The SDK's token endpoint, after RFC 8707: a ``resource`` sent here must be the one the
    grant (code or refresh token) is for; tokens stay bound to the grant's resource."""
    server = authorization_server(request)
    fields = await form_fields(request)
    if fields.get("resource"):
        granted = await grant_resource(server, fields, issuer(request))
        requested = canonical_resource(fields["resource"])
        if granted is not None and requested != granted:
            return JSONResponse(
                {
                    "error": "invalid_target",
                    "error_description": f"this grant is for {granted}, not {requested}",
                },
                400,
                NO_STORE,
            )
    return await TokenHandler(server, ClientAuthenticator(server)).handle(request)


async def grant_resource(
    server: AuthorizationServer, fields: dict[str, str], base: str
) -> str | None:
    """The resource of the grant a token request presents (a grant from before resources
    were recorded: the whole service at ``base``); None when the grant is unknown (the SDK
    answers ``invalid_grant`` for it)."""
    record = None
    if fields.get("grant_type") == "authorization_code":
        record = await server.store.oauth_codes.get(fields.get("code", ""))
    elif fields.get("grant_type") == "refresh_token":
        record = await server.store.oauth_tokens.find(fields.get("refresh_token", ""), "refresh")
    if record is None:
        return None
    return str(record.get("resource") or canonical_resource(base))


async def revoke(request: Request) -> Response:
    """RFC 7009. Not the SDK's handler: its form model requires ``client_secret``, which a
    public client (``token_endpoint_auth_method: none``, as MCP clients register) never has."""
    server = authorization_server(request)
    no_store = NO_STORE
    try:
        client = await ClientAuthenticator(server).authenticate_request(request)
    except AuthenticationError as exc:
        return JSONResponse(
            {"error": "invalid_client", "error_description": exc.message}, 401, no_store
        )
    fields = await form_fields(request)
    secret = fields.get("token", "")
    if not secret:
        return JSONResponse(
            {"error": "invalid_request", "error_description": "token: Field required"},
            400,
            no_store,
        )
    found: FincapAccessToken | FincapRefreshToken | None = await server.load_access_token(secret)
    if found is None:
        found = await server.load_refresh_token(client, secret)
    # An unknown token, or another client's, is answered 200 too (RFC 7009 §2.2).
    if found is not None and found.client_id == client.client_id:
        await server.revoke_token(found)
    answer = Response(status_code=200, headers=no_store)
    if client.client_id == DASHBOARD_CLIENT_ID:
        # The dashboard revokes from the browser when a person signs out: the sign-in page's
        # session in that browser ends too, so the next person at this computer must type a
        # password (the remembered consent only spares the consent page).
        answer.delete_cookie(SESSION_COOKIE, **cookie_options(request))
    return answer


async def dashboard_client(request: Request) -> Response:
    """The dashboard's first-party client (``resolvers.services.auth.oauth_first_party``): its id,
    its one redirect URI and the scopes it asks for, so the page needs no registration."""
    return JSONResponse(
        {
            "client_id": DASHBOARD_CLIENT_ID,
            "redirect_uri": dashboard_redirect_uri(issuer(request)),
            "scope": " ".join(DASHBOARD_SCOPES),
        },
        headers={"Cache-Control": "no-cache"},
    )


async def sign_in_endpoint(request: Request) -> Response:
    return await (submit_sign_in if request.method == "POST" else show_sign_in)(request)


def oauth_routes() -> list[Route]:
    return [
        Route("/.well-known/oauth-authorization-server", authorization_server_metadata),
        Route(f"{MCP_PATH}/.well-known/oauth-authorization-server", authorization_server_metadata),
        Route(f"/.well-known/oauth-protected-resource{MCP_PATH}", protected_resource_metadata),
        Route(f"{MCP_PATH}/.well-known/oauth-protected-resource", protected_resource_metadata),
        Route(REGISTER_PATH, register, methods=["POST"]),
        Route(DASHBOARD_CLIENT_PATH, dashboard_client, methods=["GET"]),
        Route(AUTHORIZE_PATH, authorize, methods=["GET", "POST"]),
        Route(SIGN_IN_PATH, sign_in_endpoint, methods=["GET", "POST"]),
        Route(SIGN_IN_LINK_PATH, sign_in_link, methods=["POST"]),
        Route(CONSENT_PATH, submit_consent, methods=["POST"]),
        Route(TOKEN_PATH, token, methods=["POST"]),
        Route(REVOKE_PATH, revoke, methods=["POST"]),
    ]
