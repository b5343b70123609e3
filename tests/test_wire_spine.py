"""The persistence modules and the REST face on SecantusDB over the MongoDB wire protocol."""

from __future__ import annotations

import pymongo
import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.auth import accounts
from tests.conftest import asgi_client, make_tenant

pytestmark = pytest.mark.wire


async def test_indexes_exist_and_unique_email_is_enforced(wire_store: Store) -> None:
    await wire_store.ensure_indexes()  # idempotent: a second run changes nothing
    names = {index["name"] async for index in wire_store.db["api_keys"].list_indexes()}
    assert {"secret_hash_unique", "user"} <= names
    await wire_store.users.get_or_create("Same@Example.com")
    with pytest.raises(pymongo.errors.DuplicateKeyError):
        await wire_store.db["users"].insert_one({"_id": "usr_x", "email": "same@example.com"})
    again = await wire_store.users.get_or_create("same@example.com ")
    assert await wire_store.db["users"].count_documents({}) == 1
    assert again["email"] == "same@example.com"


async def test_workspace_reads_are_scoped_by_membership(wire_store: Store) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    bob = await make_tenant(wire_store, "bob@example.com", "Bob Ltd")
    assert await wire_store.workspaces.role_of(alice.user_id, alice.org_id) == "owner"
    assert await wire_store.workspaces.role_of(alice.user_id, bob.org_id) is None
    assert await wire_store.workspaces.get_for_member(alice.user_id, bob.org_id) is None
    listed = await wire_store.workspaces.list_for_user(bob.user_id)
    assert [w["_id"] for w in listed] == [bob.org_id]


async def test_rest_over_the_wire(wire_store: Store, registry: Registry) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    bob = await make_tenant(wire_store, "bob@example.com", "Bob Ltd")
    restricted = await accounts.create_key(
        wire_store, "alice@example.com", restrict_to=alice.org_id
    )
    async with asgi_client(wire_store, registry) as http:
        ok = await http.post("/v1/capabilities/workspaces.list", json={}, headers=alice.headers())
        assert ok.status_code == 200
        assert ok.json()["data"]["result"]["workspaces"][0]["id"] == alice.org_id

        foreign = await http.post(
            "/v1/capabilities/workspaces.list", json={}, headers=alice.headers(bob.org_id)
        )
        assert foreign.status_code == 403

        wrong = await http.get(
            "/v1/workspaces",
            headers={"x-api-key": restricted["apiKey"], "X-Service-Org-Id": bob.org_id},
        )
        assert wrong.status_code == 403
        assert wrong.json()["error"]["errorMessage"] == (
            "This API key is restricted to a different workspace"
        )
        ready = await http.get("/readyz")
        assert ready.json()["status"] == "ready"
