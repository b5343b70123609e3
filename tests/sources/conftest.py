"""Fixtures for the inbound sources: the app with the sources configured, workers that run
their jobs, and a count of everything stored (to prove a refused input leaves nothing)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from app.host.config import Settings
from app.host.workers import WorkerPool
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.framework.services import Services
from tests.conftest import Tenant, app_on, make_tenant, worker_pool
from tests.outbound import LOOPBACK_FAKES

FIXTURES = Path(__file__).parent.parent / "fixtures" / "extraction"
INBOUND_SECRET = "relay-secret-for-tests"
VERIFY_TOKEN = "verify-me"
APP_SECRET = "whatsapp-app-secret"
ACCESS_TOKEN = "graph-token-for-tests"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def source_settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "inbound_domain": "in.fincap.test",
        "inbound_secret": INBOUND_SECRET,
        "whatsapp_verify_token": VERIFY_TOKEN,
        "whatsapp_app_secret": APP_SECRET,
        "whatsapp_access_token": ACCESS_TOKEN,
        # The fakes (Dovecot, Graph) listen on loopback, which the policy admits only so.
        "outbound_allow": LOOPBACK_FAKES,
        **overrides,
    }
    return Settings(**values)


@dataclass
class SourceApp:
    """The service with its sources configured, over one store."""

    app: Starlette
    http: httpx.AsyncClient
    store: Store

    @property
    def services(self) -> Services:
        services: Services = self.app.state.services
        return services

    def workers(self) -> WorkerPool:
        """In-process workers with the same services (sources configured), OCR in a thread."""
        return worker_pool(self.store, like=self.services, count=1, lease_s=30)


async def open_source_app(
    store: Store, registry: Registry, settings: Settings
) -> AsyncIterator[SourceApp]:
    app = app_on(store, registry, settings)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://fincap.test"
    ) as http:
        yield SourceApp(app, http, store)


@pytest.fixture
async def wire_app(wire_store: Store, registry: Registry) -> AsyncIterator[SourceApp]:
    async for opened in open_source_app(wire_store, registry, source_settings()):
        yield opened


@pytest.fixture
async def tenants(wire_store: Store) -> tuple[Tenant, Tenant]:
    return (
        await make_tenant(wire_store, "alice@example.com", "Alice Co"),
        await make_tenant(wire_store, "bob@example.com", "Bob Ltd"),
    )


async def stored(store: Store) -> dict[str, int]:
    """Documents, original files (GridFS), jobs and activity items in the whole database."""
    db = store.db
    return {
        "documents": await db["documents"].count_documents({}),
        "files": await db["originals.files"].count_documents({}),
        "chunks": await db["originals.chunks"].count_documents({}),
        "jobs": await db["jobs"].count_documents({}),
        "activity": await db["activity"].count_documents({}),
    }


async def call(http: httpx.AsyncClient, tenant: Tenant, slug: str, body: dict[str, Any]) -> Any:
    response = await http.post(f"/v1/capabilities/{slug}", json=body, headers=tenant.headers())
    assert response.status_code == 200, response.text
    return response.json()["data"]["result"]


async def document(http: httpx.AsyncClient, tenant: Tenant, document_id: str) -> dict[str, Any]:
    found: dict[str, Any] = (await call(http, tenant, "documents.get", {"id": document_id}))[
        "document"
    ]
    return found
