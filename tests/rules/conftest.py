"""Tenants for the rules tests: rules.execute is approval-gated by default (decisions.md);
these workspaces switch that gate off, as a workspace may, so a save takes effect at once.
The gated path itself is tested with a workspace that keeps it (test_approval.py)."""

from __future__ import annotations

import pytest

from persistence.store import Store
from tests.conftest import Tenant, make_tenant


async def ungated_tenant(store: Store, email: str, workspace: str) -> Tenant:
    tenant = await make_tenant(store, email, workspace)
    await store.workspaces.set_gated(tenant.org_id, "rules.execute", False)
    return tenant


@pytest.fixture
async def alice(store: Store) -> Tenant:
    return await ungated_tenant(store, "alice@example.com", "Alice Co")


@pytest.fixture
async def bob(store: Store) -> Tenant:
    return await ungated_tenant(store, "bob@example.com", "Bob Ltd")
