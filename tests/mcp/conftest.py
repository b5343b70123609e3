"""Fixtures of the MCP and OAuth tests: the app behind its public address, a person who can
sign in."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from starlette.applications import Starlette

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.auth.oauth import set_password
from tests.conftest import Tenant, app_on
from tests.mcp.live import Live, live_server

PASSWORD = "correct horse battery"


@pytest.fixture
def app(store: Store, registry: Registry) -> Starlette:
    return app_on(store, registry, Settings(public_url="https://fincap.test"))


@pytest.fixture
async def http(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    """The app through ASGI, at the public address its OAuth metadata names."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://fincap.test") as client:
        yield client


@pytest.fixture
async def person(store: Store, alice: Tenant) -> Tenant:
    """Alice, with a password for the sign-in page."""
    await set_password(store, "alice@example.com", PASSWORD)
    return alice


@pytest.fixture(scope="session")
def live() -> Iterator[Live]:
    """fincap on a real socket (in-memory store, one tenant with a password), shared by the
    modules that drive it from outside ASGI: each test signs in and registers its own client."""
    with live_server() as server:
        yield server
