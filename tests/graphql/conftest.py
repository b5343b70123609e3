"""Fixtures of the GraphQL face's tests (the store and tenants come from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from persistence.store import Store
from tests.conftest import asgi_client
from tests.graphql.helpers import test_registry


@pytest.fixture
async def api(store: Store) -> AsyncIterator[httpx.AsyncClient]:
    """The app with workspaces, the probe resource and the sample resource."""
    async with asgi_client(store, test_registry()) as http:
        yield http
