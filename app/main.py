"""The ASGI app factory: everything is built from ``Settings`` (or injected by tests)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from importlib.metadata import version as package_version_of

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.body_limit import BodySizeLimit
from app.config import Settings
from app.connectors import connectors_from
from app.database import open_store
from app.graphql import graphql_routes
from app.help_pages import help_routes
from app.inbound import inbound_routes
from app.integrations import integration_routes
from app.mcp import mcp_routes
from app.metrics import Metrics
from app.oauth import oauth_routes
from app.observability import RequestIdMiddleware
from app.openapi import build_openapi
from app.processing import automation_config, running_workers
from app.rest import failure, rest_routes
from app.secret_key import load_keyring
from app.smtp import start_smtp_server
from app.web import web_routes
from engines.help_center import index_at_start_up, use_vector_cache
from engines.keyring import Keyring
from engines.ocr_availability import installed_ocr_engines
from persistence.store import Store
from resolvers import build_registry
from resolvers.auth_cache import AuthCache
from resolvers.context import Services
from resolvers.registry import Registry
from resolvers.search_indexes import SearchIndexes
from resolvers.subscriptions import schedule_period_closes
from resolvers.usage_meter import flushing

log = logging.getLogger("fincap.app")


def package_version() -> str:
    """The installed fincap version (shown by ``/healthz`` and ``fincap doctor``)."""
    return package_version_of("fincap")


def create_app(
    settings: Settings | None = None,
    *,
    store: Store | None = None,
    registry: Registry | None = None,
) -> Starlette:
    """Build the service. With ``store`` given (tests) no database is opened or closed here."""
    settings = settings or Settings.from_env()
    registry = registry or build_registry()
    openapi = build_openapi(registry, settings.base_url)
    metrics = Metrics(frozenset(spec.slug for spec in registry))

    async def openapi_json(request: Request) -> Response:
        return JSONResponse(openapi)

    health = {"status": "ok", "version": package_version(), "ocr": list(installed_ocr_engines())}

    async def healthz(request: Request) -> Response:
        return JSONResponse(health)

    async def readyz(request: Request) -> Response:
        services: Services | None = getattr(request.app.state, "services", None)
        checks = {
            "store": services is not None and await services.store.ping(),
            # A broken analysis pool is replaced here; false when no working one can be made.
            "analysis": services is not None
            and (services.analyzer is None or services.analyzer.ready()),
        }
        ready = all(checks.values())
        return JSONResponse(
            {"status": "ready" if ready else "unavailable", "checks": checks},
            status_code=200 if ready else 503,
        )

    async def not_found(request: Request, exc: Exception) -> Response:
        return failure(404, f"No route for {request.method} {request.url.path}")

    async def method_not_allowed(request: Request, exc: Exception) -> Response:
        response = failure(405, f"Method {request.method} not allowed on {request.url.path}")
        # The router's exception names the route's methods (RFC 9110: a 405 carries Allow).
        response.headers.update(getattr(exc, "headers", None) or {})
        return response

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("unhandled error", exc_info=exc)
        return failure(500, "Internal server error")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if store is not None:
            yield
            return
        keyring = load_keyring(settings)
        # The help center is indexed at start-up in a worker thread, beside the store's start,
        # so that the first help search does not pay the build; readiness does not wait for it
        # (built in the event loop it once pushed readiness past a minute on a busy machine).
        # Its vectors are kept in the data dir, so later starts read them instead of embedding.
        use_vector_cache(settings.data_dir / "help_center")
        help_index = index_at_start_up()
        try:
            async with _serving(app, keyring):
                yield
        finally:
            await help_index  # a build still running at shutdown finishes, not cut off

    @contextlib.asynccontextmanager
    async def _serving(app: Starlette, keyring: Keyring) -> AsyncIterator[None]:
        """The store, the workers and the usage flush, for as long as the app serves."""
        async with (
            open_store(settings) as opened,
            running_workers(
                opened,
                settings,
                count=settings.workers,
                on_job=metrics.observe_job,
                keyring=keyring,
                registry=registry,
            ) as pool,
            # Last in, first out: the final flush happens while the store is still open.
            flushing(pool.services.api_calls, opened.usage, settings.usage_flush_s),
        ):
            app.state.services = pool.services
            smtp = None
            if settings.inbound_smtp_port is not None:
                smtp = await start_smtp_server(
                    pool.services, settings.inbound_smtp_host, settings.inbound_smtp_port
                )
                log.info(
                    "SMTP receiver listening",
                    extra={"host": settings.inbound_smtp_host, "port": settings.inbound_smtp_port},
                )
            # Billing periods close in a durable job: queued once (dedupe key) by the API
            # process, run by whichever worker is free, here or in `fincap worker` processes.
            await schedule_period_closes(opened)
            log.info(
                "store ready",
                extra={"embedded": settings.mongodb_uri is None, "workers": settings.workers},
            )
            try:
                yield
            finally:
                log.info("shutting down")
                if smtp is not None:
                    smtp.close()
                    await smtp.wait_closed()

    # The router tries routes in order (a regex match each): capability calls and GraphQL,
    # the bulk of the traffic, come first. No two paths overlap, so the order decides nothing.
    routes = [
        *rest_routes(registry),
        *graphql_routes(registry),
        Route("/openapi.json", openapi_json, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics.endpoint, methods=["GET"]),
        *mcp_routes(registry),
        *oauth_routes(),
        *inbound_routes(settings),
        *help_routes(),
        *integration_routes(),
        *web_routes(registry, openapi),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(RequestIdMiddleware, metrics=metrics),
            # Inside the request id, so a 413 is logged and counted like any answer.
            Middleware(
                BodySizeLimit,
                max_bytes=settings.max_body_bytes,
                too_large=lambda message: failure(413, message),
            ),
        ],
        lifespan=lifespan,
        exception_handlers={404: not_found, 405: method_not_allowed, 500: server_error},
    )
    app.state.registry = registry
    if store is not None:
        # Tests: the configured secret if any, else a random one (never a file in the cwd).
        secret = settings.secret_key
        keyring = Keyring.from_text(secret.get_secret_value()) if secret else Keyring.generate()
        app.state.services = Services(
            store=store,
            base_url=settings.base_url,
            keyring=keyring,
            auth_cache=AuthCache(ttl=settings.auth_cache_seconds),
            registry=registry,
            automation=automation_config(settings),
            sources=settings.sources,
            search=SearchIndexes(settings.search_config()),
            plans=settings.plan_catalog(),
            connectors=connectors_from(settings),
            outbound=settings.outbound_policy(),
        )
    app.state.settings = settings
    return app
