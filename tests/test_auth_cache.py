"""The auth cache: fewer store reads per call, and revocation still immediate here."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.auth_cache import AuthCache
from resolvers.framework.context import Principal
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, app_on


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_entries_expire_and_are_forgotten() -> None:
    clock = Clock()
    cache = AuthCache(ttl=30, clock=clock)
    key = Principal(user_id="usr_1", key_id="key_1")
    cache.remember_principal("sk_secret", key)
    cache.remember_role("usr_1", "org_1", "owner")
    assert cache.principal("sk_secret") == key
    assert cache.role("usr_1", "org_1") == "owner"
    assert cache.principal("sk_other") is None
    clock.now += 31
    assert cache.principal("sk_secret") is None
    assert cache.role("usr_1", "org_1") is None

    cache.remember_principal("sk_secret", key)
    cache.forget_credential("key_1")
    assert cache.principal("sk_secret") is None
    cache.remember_role("usr_1", "org_1", "owner")
    cache.forget_member("usr_1", "org_1")
    assert cache.role("usr_1", "org_1") is None


def test_a_token_is_not_kept_past_its_expiry() -> None:
    cache = AuthCache(ttl=30)
    expired = Principal(user_id="u", key_id="fam_1", via="oauth", expires_at=1)
    cache.remember_principal("fat_x", expired)
    assert cache.principal("fat_x") is None


def test_disabled_and_bounded() -> None:
    off = AuthCache(ttl=0)
    off.remember_principal("sk_a", Principal(user_id="u", key_id="k"))
    assert off.principal("sk_a") is None
    small = AuthCache(ttl=30, max_entries=2)
    for n in range(5):
        small.remember_principal(f"sk_{n}", Principal(user_id="u", key_id=f"k{n}"))
    assert small.principal("sk_0") is None and small.principal("sk_4") is not None


@pytest.mark.parametrize("ttl", [0.0, 30.0])
async def test_repeated_calls_skip_the_credential_reads(
    ttl: float, store: Store, registry: Registry, alice: Tenant
) -> None:
    """A second call reads neither the key nor the membership while they are cached."""
    app = app_on(store, registry, Settings(auth_cache_seconds=ttl))
    services = app.state.services
    body = {"amount": 1, "fromCurrency": "EUR", "toCurrency": "USD"}
    store = services.store
    found: list[str] = []
    original_key, original_role = store.api_keys.find_active, store.workspaces.role_of

    async def find_active(secret: str) -> Any:
        found.append("key")
        return await original_key(secret)

    async def role_of(user_id: str, org_id: str) -> Any:
        found.append("membership")
        return await original_role(user_id, org_id)

    store.api_keys.find_active, store.workspaces.role_of = find_active, role_of
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as client:
        for _ in range(3):
            response = await client.post(
                "/v1/capabilities/currency.convert", json=body, headers=alice.headers()
            )
            assert response.status_code == 200, response.text
    expected = 3 if ttl == 0 else 1
    assert found.count("key") == expected and found.count("membership") == expected
