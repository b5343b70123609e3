"""Shared pieces of the GraphQL face's tests: the test registry, a client, a live server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from mongomock_motor import AsyncMongoMockClient
from starlette.types import ASGIApp

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.resources import workspaces
from resolvers.services.auth import accounts
from tests import probe_resource
from tests.conftest import app_on
from tests.graphql import sample_resource
from tests.live import app_in_thread

GRAPHQL = "/v1/graphql"


def test_registry() -> Registry:
    """Real workspaces, the REST tests' probe and the converter's sample resource."""
    return Registry.from_modules([workspaces, probe_resource, sample_resource]).freeze()


test_registry.__test__ = False  # type: ignore[attr-defined]  # a factory, not a test


async def gql(
    client: httpx.AsyncClient,
    query: str,
    variables: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """POST ``query`` and return the decoded body (asserting a JSON GraphQL response)."""
    response = await client.post(
        GRAPHQL, json={"query": query, "variables": variables}, headers=headers or {}
    )
    assert response.headers["content-type"].startswith("application/json"), response.text
    body: dict[str, Any] = response.json()
    return body


@dataclass
class LiveServer:
    """A uvicorn server on a free loopback port, with one bootstrapped tenant."""

    url: str
    api_key: str
    org_id: str


@contextmanager
def live_server() -> Iterator[LiveServer]:
    """Serve the app (in-memory store) from a thread for tools outside Python (node, chromium)."""

    async def setup(port: int) -> tuple[ASGIApp, dict[str, str]]:
        store = Store(AsyncMongoMockClient(tz_aware=True)[f"fincap_{uuid.uuid4().hex[:8]}"])
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, "live@example.com", "Live Co")
        return app_on(store, test_registry(), Settings(port=port)), tenant

    with app_in_thread(setup) as served:
        tenant = served.setup
        yield LiveServer(f"{served.base}{GRAPHQL}", tenant["apiKey"], tenant["orgId"])
