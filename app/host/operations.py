"""The routes operators and orchestrators read: ``/healthz``, ``/readyz``, ``/metrics``.

``/healthz`` is liveness: it answers 200 whenever the process can answer at all, so that a
supervisor never kills a process that is only waiting for its store (a restart would not bring
the store back, and would drop what the process holds). Its body says what is wrong:
``status`` is ``degraded`` while the store is down or restarting or its disk is low, else
``ok``; ``store`` is the store's state as the driver last saw it (``up``, ``down``,
``restarting``, ``unknown``; ``persistence.health``), ``disk`` the free space left against the
intake's floor. ``/readyz`` is readiness: 503 (with ``Retry-After``)
while the store does not answer a read or no analysis process can start, so a load balancer
sends the traffic elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
from importlib.metadata import version as package_version_of
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.host.metrics import Metrics
from engines.ocr_availability import installed_ocr_engines
from resolvers.framework.errors import STORE_RETRY_AFTER_S
from resolvers.framework.services import Services
from resolvers.services.processing.disk_space import MB

# How long /healthz waits for the store's free space (a call to MongoDB; instant when embedded).
DISK_PROBE_S = 0.5


def package_version() -> str:
    """The installed fincap version (shown by ``/healthz`` and ``fincap doctor``)."""
    return package_version_of("fincap")


async def health_of(services: Services | None) -> dict[str, Any]:
    """What ``/healthz`` says of the store and its disk, without waiting for the store."""
    if services is None:  # starting up or shutting down: the store is not open
        return {"status": "starting", "store": {"state": "unknown"}}
    store = services.store.health
    disk = services.disk
    # Only a store that answers is asked for its disk (MongoDB's figure is a call to it), and
    # never for long: liveness must answer at once.
    free = disk.last_seen()
    if store.state == "up":
        with contextlib.suppress(TimeoutError):
            free = await asyncio.wait_for(disk.free_bytes(), DISK_PROBE_S)
    low = free is not None and disk.min_free_bytes > 0 and free < disk.min_free_bytes
    shown: dict[str, Any] = {
        # Unknown is not down: a store no driver watches (tests' in-memory one) stays unknown.
        "status": "degraded" if store.state in ("down", "restarting") or low else "ok",
        "store": store.snapshot(),
        "disk": {
            "freeMB": None if free is None else free // MB,
            "minFreeMB": disk.min_free_bytes // MB,
            "low": low,
        },
    }
    return shown


def operations_routes(metrics: Metrics) -> list[Route]:
    process = {"version": package_version(), "ocr": list(installed_ocr_engines())}

    async def healthz(request: Request) -> Response:
        services: Services | None = getattr(request.app.state, "services", None)
        return JSONResponse({**(await health_of(services)), **process})

    async def readyz(request: Request) -> Response:
        services: Services | None = getattr(request.app.state, "services", None)
        # A store the driver knows to be away is not asked again (that would wait out the
        # store timeout); otherwise a read tells (a store whose storage failed answers ping).
        away = services is None or services.store.health.state in ("down", "restarting")
        checks = {
            "store": not away and services is not None and await services.store.ping(),
            # A broken analysis pool is replaced here; false when no working one can be made.
            "analysis": services is not None
            and (services.analyzer is None or services.analyzer.ready()),
        }
        ready = all(checks.values())
        response = JSONResponse(
            {"status": "ready" if ready else "unavailable", "checks": checks},
            status_code=200 if ready else 503,
        )
        if not ready:
            response.headers["Retry-After"] = str(STORE_RETRY_AFTER_S)
        return response

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics.endpoint, methods=["GET"]),
    ]
