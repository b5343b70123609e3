"""Billing fixtures: tenants whose workspaces were created at a chosen moment, a moved clock."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from mongomock_motor import AsyncMongoMockClient

from engines.billing.plans import default_catalog
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.framework.services import Services
from resolvers.framework.usage_meter import ApiCallMeter
from resolvers.services.billing import subscriptions
from tests.clock import ManualClock
from tests.conftest import Tenant, app_on, make_tenant

START = datetime(2024, 1, 31, 9, 30, tzinfo=UTC)  # a 31st, in a leap year


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
async def store(clock: ManualClock) -> Store:
    """The in-memory store, its jobs on the manual clock (lease expiry, due times)."""
    import uuid

    created = Store(AsyncMongoMockClient(tz_aware=True)[f"bill_{uuid.uuid4().hex[:8]}"], clock)
    await created.ensure_indexes()
    return created


async def tenant_since(store: Store, email: str, name: str, when: datetime) -> Tenant:
    """A bootstrapped tenant whose workspace (and subscription) began at ``when``."""
    tenant = await make_tenant(store, email, name)
    await store.db["workspaces"].update_one({"_id": tenant.org_id}, {"$set": {"createdAt": when}})
    await store.db["subscriptions"].delete_many({"workspaceId": tenant.org_id})
    workspace = await store.workspaces.get_unscoped(tenant.org_id)
    assert workspace is not None
    await subscriptions.open_subscription(store, default_catalog(), workspace, when)
    return tenant


@pytest.fixture
async def alice(store: Store) -> Tenant:
    return await tenant_since(store, "alice@example.com", "Alice Co", START)


@pytest.fixture
async def bob(store: Store) -> Tenant:
    return await tenant_since(store, "bob@example.com", "Bob Ltd", START)


@dataclass
class Billed:
    """The ASGI app over ``store`` with billing on the manual clock."""

    http: httpx.AsyncClient
    services: Services
    clock: ManualClock

    async def call(
        self, slug: str, body: dict[str, Any], headers: dict[str, str]
    ) -> httpx.Response:
        return await self.http.post(f"/v1/capabilities/{slug}", json=body, headers=headers)

    async def ok(self, slug: str, body: dict[str, Any], headers: dict[str, str]) -> Any:
        response = await self.call(slug, body, headers)
        assert response.status_code == 200, response.text
        return response.json()["data"]["result"]

    async def gql(
        self, query: str, headers: dict[str, str], variables: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        response = await self.http.post(
            "/v1/graphql", json={"query": query, "variables": variables}, headers=headers
        )
        body: dict[str, Any] = response.json()
        return body


@pytest.fixture
async def billed(store: Store, registry: Registry, clock: ManualClock) -> AsyncIterator[Billed]:
    app = app_on(store, registry)
    services = dataclasses.replace(app.state.services, clock=clock, api_calls=ApiCallMeter(clock))
    app.state.services = services
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        yield Billed(http, services, clock)
