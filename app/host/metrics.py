"""Prometheus metrics of one app instance (``GET /metrics``).

Each app builds its own ``CollectorRegistry`` (no process-global state), so tests and several
apps in one process do not share counters. Labels stay bounded: methods are the
standard ones (anything else is ``other``), routes are the route templates
(``/v1/capabilities/{slug}``), capabilities only the registry's slugs.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from starlette.requests import Request
from starlette.responses import Response

UNMATCHED = "unmatched"
# Any other method name is one label value: a client inventing methods must not grow /metrics.
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
OTHER_METHOD = "other"


class Metrics:
    """Counters and histograms of HTTP requests, capability calls and processing jobs."""

    def __init__(self, capability_slugs: frozenset[str]) -> None:
        self.registry = CollectorRegistry()
        self._slugs = capability_slugs
        self._children: dict[tuple[str, str, int, str | None], tuple[Any, Any, Any]] = {}
        self.requests = Counter(
            "fincap_http_requests",
            "HTTP requests by route template and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "fincap_http_request_duration_seconds",
            "HTTP request duration by route template",
            ["method", "route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
        )
        self.capability_calls = Counter(
            "fincap_capability_calls",
            "REST capability calls by slug and status",
            ["capability", "status"],
            registry=self.registry,
        )
        self.jobs = Counter(
            "fincap_jobs",
            "Processing jobs run by this process, by kind and outcome",
            ["kind", "outcome"],
            registry=self.registry,
        )

    def observe_request(
        self, method: str, route: str | None, status: int, seconds: float, slug: str | None
    ) -> None:
        template = route or UNMATCHED
        method = method if method in HTTP_METHODS else OTHER_METHOD
        key = (method, template, status, slug if slug in self._slugs else None)
        children = self._children.get(key)
        if children is None:
            # ``labels()`` validates and looks up on every call; a request's children are
            # bounded (methods × route templates × statuses × known slugs), so keep them.
            children = (
                self.requests.labels(method, template, str(status)),
                self.latency.labels(method, template),
                self.capability_calls.labels(key[3], str(status)) if key[3] else None,
            )
            self._children[key] = children
        requests, latency, calls = children
        requests.inc()
        latency.observe(seconds)
        if calls is not None:
            calls.inc()

    def observe_job(self, kind: str, outcome: str) -> None:
        self.jobs.labels(kind, outcome).inc()

    async def endpoint(self, request: Request) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)
