"""The composition root: ``create_app`` builds the registry and the faces once and mounts them.

The faces are packages of their own (``app.rest``, ``app.graphql``, ``app.mcp``, ``app.oauth``,
``app.web``, ``app.inbound``); the services come from ``app.host.services.build_services``, either
built by the app's lifespan for as long as it serves (``app.host.serving``: the store, the workers)
or handed in by whoever owns them (tests, a process embedding the app).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection
from starlette.types import Scope

from app.graphql import Limits, graphql_routes
from app.graphql.read_budget import AnonymousBudget, ReadBudget
from app.graphql.sockets import SocketLimits
from app.host.config import Settings
from app.host.metrics import Metrics
from app.host.observability import RequestIdMiddleware
from app.host.operations import operations_routes
from app.host.serving import serving
from app.http.body_limit import BodySizeLimit
from app.http.envelope import EXCEPTION_HANDLERS, failure
from app.http.request_context import credentials_of
from app.inbound import INBOUND_EMAIL_PATH, inbound_routes
from app.mcp import mcp_routes
from app.oauth import oauth_routes
from app.oauth.metadata import REGISTER_PATH
from app.rest import build_openapi, rest_routes
from app.web import help_routes, web_routes
from resolvers import default_registry
from resolvers.framework.auth import authenticate
from resolvers.framework.errors import CapabilityError
from resolvers.framework.registry import Registry
from resolvers.framework.services import Services
from resolvers.services.auth.client_addresses import TrustedProxies


async def sender_authenticates(scope: Scope) -> bool:
    """Whether the request's headers or query carry a credential that authenticates."""
    conn = HTTPConnection(scope)
    services: Services | None = getattr(conn.app.state, "services", None)
    credentials = credentials_of(conn)
    if services is None or not credentials.api_key:
        return False
    try:
        await authenticate(services.store, credentials, services.auth_cache)
    except CapabilityError:
        return False
    return True


def create_app(
    settings: Settings | None = None,
    *,
    services: Services | None = None,
    registry: Registry | None = None,
) -> Starlette:
    """The service as an ASGI app.

    Without ``services`` the app owns them: its lifespan opens the store and runs the workers
    (``app.host.serving``). With ``services`` (from ``app.host.services.build_services``) it serves
    with those and opens nothing; their owner closes what they hold.
    """
    settings = settings or Settings.from_env()
    registry = registry or (services and services.registry) or default_registry()
    # Shared by every app of this registry and address in the process (Registry.derived).
    openapi = registry.derived(
        ("openapi", settings.base_url), lambda: build_openapi(registry, settings.base_url)
    )
    metrics = Metrics(frozenset(spec.slug for spec in registry))
    # The router tries routes in order (a regex match each): capability calls and GraphQL,
    # the bulk of the traffic, come first. No two paths overlap, so the order decides nothing.
    routes = [
        *rest_routes(registry, openapi),
        *graphql_routes(
            registry,
            Limits(
                document_cache=settings.graphql_document_cache,
                document_cache_bytes=settings.graphql_document_cache_mb * 1024 * 1024,
            ),
            SocketLimits(
                message_bytes=settings.ws_message_bytes,
                operations=settings.ws_operations,
                per_member=settings.ws_operations_per_member,
                per_workspace=settings.ws_operations_per_workspace,
            ),
            ReadBudget(settings.graphql_read_points, settings.graphql_read_points_per_minute),
            AnonymousBudget(
                settings.graphql_anonymous_kb, settings.graphql_anonymous_kb_per_minute
            ),
        ),
        *operations_routes(metrics),
        *mcp_routes(registry),
        *oauth_routes(),
        *inbound_routes(settings),
        *help_routes(),
        *web_routes(registry, openapi),
    ]
    middleware = [
        Middleware(RequestIdMiddleware, metrics=metrics),
        # Inside the request id, so a 413 is logged and counted like any answer.
        Middleware(
            BodySizeLimit,
            max_bytes=settings.max_body_bytes,
            too_large=lambda message: failure(413, message),
            anonymous_bytes=settings.max_anonymous_body_bytes,
            admits=sender_authenticates,
            # The mail relay's door checks its secret before it reads the message, and client
            # registration reads at most 16 KB before it parses (OAuth's own error format).
            exempt=(INBOUND_EMAIL_PATH, REGISTER_PATH),
        ),
    ]
    app = Starlette(
        routes=routes,
        middleware=middleware,
        lifespan=serving(settings, registry, metrics) if services is None else None,
        exception_handlers=EXCEPTION_HANDLERS,
    )
    app.state.registry = registry
    app.state.settings = settings
    app.state.trusted_proxies = TrustedProxies.from_setting(settings.trusted_proxies)
    app.state.services = services
    return app
