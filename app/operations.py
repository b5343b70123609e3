"""The routes operators and orchestrators read: ``/healthz``, ``/readyz``, ``/metrics``."""

from __future__ import annotations

from importlib.metadata import version as package_version_of

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.metrics import Metrics
from engines.ocr_availability import installed_ocr_engines
from resolvers.services.container import Services


def package_version() -> str:
    """The installed fincap version (shown by ``/healthz`` and ``fincap doctor``)."""
    return package_version_of("fincap")


def operations_routes(metrics: Metrics) -> list[Route]:
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

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics.endpoint, methods=["GET"]),
    ]
