"""api-keys.create / list / revoke through REST and GraphQL: the user's own keys as seen from one
workspace, never more than the creator holds, and revoked at once (auth cache included)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from persistence.store import Store
from resolvers.services.auth import accounts
from tests.conftest import Tenant


async def call(
    client: httpx.AsyncClient, slug: str, body: dict[str, Any], headers: dict[str, str]
) -> httpx.Response:
    return await client.post(f"/v1/capabilities/{slug}", json=body, headers=headers)


async def test_create_list_revoke_and_the_secret_stops_working(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    created = await call(client, "api-keys.create", {"name": "export"}, alice.headers())
    assert created.status_code == 200, created.text
    result = created.json()["data"]["result"]
    secret, key = result["apiKey"], result["key"]
    assert secret.startswith("sk_") and key["prefix"] == secret[:7]
    assert key["restrictedTo"] == alice.org_id and key["scopes"] == ["all"]
    assert key["isCurrent"] is False and key["revokedAt"] is None

    # The new key works (its own workspace needs no header) and the cache now knows it.
    own = {"Authorization": f"Bearer {secret}"}
    assert (await call(client, "workspaces.list", {}, own)).status_code == 200

    listed = (await call(client, "api-keys.list", {}, alice.headers())).json()["data"]["result"]
    names = [k["name"] for k in listed["keys"]]
    assert names == ["export", "bootstrap"]  # newest first; the unrestricted caller sees both
    assert [k["isCurrent"] for k in listed["keys"]] == [False, True]
    assert all("secretHash" not in k and "apiKey" not in k for k in listed["keys"])

    revoked = await call(client, "api-keys.revoke", {"id": key["id"]}, alice.headers())
    assert revoked.status_code == 200 and revoked.json()["data"]["result"]["key"]["revokedAt"]
    # Refused at once, although the auth cache had it a moment ago.
    assert (await call(client, "workspaces.list", {}, own)).status_code == 401
    again = await call(client, "api-keys.revoke", {"id": key["id"]}, alice.headers())
    assert again.status_code == 200  # idempotent
    active = (await call(client, "api-keys.list", {}, alice.headers())).json()["data"]["result"]
    assert [k["name"] for k in active["keys"]] == ["bootstrap"]
    everything = await call(client, "api-keys.list", {"includeRevoked": True}, alice.headers())
    assert len(everything.json()["data"]["result"]["keys"]) == 2


async def test_keys_of_another_user_or_workspace_are_not_found(
    client: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    bobs = (await call(client, "api-keys.create", {"name": "b"}, bob.headers())).json()
    bob_key = bobs["data"]["result"]["key"]["id"]
    missing = await call(client, "api-keys.revoke", {"id": bob_key}, alice.headers())
    assert missing.status_code == 404
    assert bob_key not in str((await call(client, "api-keys.list", {}, alice.headers())).json())

    # Alice in a second workspace: a key restricted there is invisible from the first one, and
    # a key restricted to the first can neither see nor revoke her unrestricted key.
    side = await accounts.create_workspace(store, "alice@example.com", "Side")
    there = await call(client, "api-keys.create", {"name": "side"}, alice.headers(side["orgId"]))
    side_key = there.json()["data"]["result"]["key"]["id"]
    assert (
        await call(client, "api-keys.revoke", {"id": side_key}, alice.headers())
    ).status_code == 404

    here = (await call(client, "api-keys.create", {"name": "here"}, alice.headers())).json()
    restricted = {"Authorization": f"Bearer {here['data']['result']['apiKey']}"}
    seen = (await call(client, "api-keys.list", {}, restricted)).json()["data"]["result"]["keys"]
    assert [k["name"] for k in seen] == ["here"] and seen[0]["isCurrent"] is True
    bootstrap_key = next(
        k["id"]
        for k in (await call(client, "api-keys.list", {}, alice.headers())).json()["data"][
            "result"
        ]["keys"]
        if k["name"] == "bootstrap"
    )
    refused = await call(client, "api-keys.revoke", {"id": bootstrap_key}, restricted)
    assert refused.status_code == 404
    wider = await call(client, "api-keys.create", {"name": "x", "restricted": False}, restricted)
    assert wider.status_code == 403 and "restricted" in wider.json()["error"]["errorMessage"]


async def test_bad_input_is_a_400_naming_the_field(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    for body, field in (({}, "name"), ({"name": ""}, "name"), ({"name": "a", "x": 1}, "x")):
        response = await call(client, "api-keys.create", body, alice.headers())
        assert response.status_code == 400 and field in response.json()["error"]["errorMessage"], (
            response.text
        )
    response = await call(client, "api-keys.revoke", {"id": ""}, alice.headers())
    assert response.status_code == 400 and "id" in response.json()["error"]["errorMessage"]
    assert (
        await call(client, "api-keys.list", {}, {"Authorization": "Bearer sk_nope"})
    ).status_code == 401


async def test_through_graphql(client: httpx.AsyncClient, alice: Tenant) -> None:
    async def gql(query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await client.post(
            "/v1/graphql", json={"query": query, "variables": variables}, headers=alice.headers()
        )
        body: dict[str, Any] = response.json()
        return body

    made = await gql(
        "mutation($i: CreateApiKeyInput!) { apiKeysCreate(input: $i) { apiKey key { id name } } }",
        {"i": {"name": "graph"}},
    )
    key_id = made["data"]["apiKeysCreate"]["key"]["id"]
    listed = await gql("{ apiKeysList(input: {}) { keys { id name isCurrent } } }")
    assert [k["name"] for k in listed["data"]["apiKeysList"]["keys"]] == ["graph", "bootstrap"]
    gone = await gql(
        "mutation($i: RevokeApiKeyInput!) { apiKeysRevoke(input: $i) { key { id revokedAt } } }",
        {"i": {"id": key_id}},
    )
    assert gone["data"]["apiKeysRevoke"]["key"]["revokedAt"]
    missing = await gql('mutation { apiKeysRevoke(input: {id: "key_nope"}) { key { id } } }')
    assert missing["errors"][0]["extensions"]["status"] == 404


async def test_a_scoped_oauth_like_key_creates_keys_no_wider_than_itself(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    from resolvers.framework.auth import new_api_key_secret

    secret = new_api_key_secret()
    await store.api_keys.create(
        alice.user_id,
        secret,
        restricted_to=alice.org_id,
        name="narrow",
        scopes=["read_api_keys", "write_api_keys"],
    )
    narrow = {"Authorization": f"Bearer {secret}"}
    made = await call(client, "api-keys.create", {"name": "child"}, narrow)
    assert made.json()["data"]["result"]["key"]["scopes"] == ["read_api_keys", "write_api_keys"]
    # Without read_documents the narrow key cannot read documents, nor can its child.
    child = {"Authorization": f"Bearer {made.json()['data']['result']['apiKey']}"}
    assert (await call(client, "documents.search", {}, child)).status_code == 403


async def test_scopes_are_chosen_when_made_within_the_role_and_the_credential(
    client: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    chosen = await call(
        client,
        "api-keys.create",
        {"name": "reader", "scopes": ["read_documents", "read_documents", "read_rules"]},
        alice.headers(),
    )
    assert chosen.status_code == 200, chosen.text
    key = chosen.json()["data"]["result"]["key"]
    assert key["scopes"] == ["read_documents", "read_rules"]
    assert key["origin"] == "api_key" and key["originName"] == "bootstrap"
    reader = {"Authorization": f"Bearer {chosen.json()['data']['result']['apiKey']}"}
    assert (await call(client, "documents.search", {}, reader)).status_code == 200
    assert (await call(client, "rules.list", {}, reader)).status_code == 200
    assert (await call(client, "integrations.list", {}, reader)).status_code == 403

    unknown = await call(
        client, "api-keys.create", {"name": "x", "scopes": ["read_everything"]}, alice.headers()
    )
    assert unknown.status_code == 400 and "read_everything" in unknown.text
    too_many = await call(
        client, "api-keys.create", {"name": "x", "scopes": ["read_rules"] * 21}, alice.headers()
    )
    assert too_many.status_code == 400 and "scopes" in too_many.text

    # Alice is a member of Bob's workspace: her keys there get a member's scopes by default,
    # and asking for more than a member may use is refused, naming the scope.
    await store.workspaces.add_member(bob.org_id, alice.user_id, "member")
    there = alice.headers(bob.org_id)
    default = await call(client, "api-keys.create", {"name": "m"}, there)
    scopes = default.json()["data"]["result"]["key"]["scopes"]
    assert "all" not in scopes and "read_integrations" in scopes and "read_documents" in scopes
    more = await call(client, "api-keys.create", {"name": "m", "scopes": ["all"]}, there)
    assert more.status_code == 403
    assert "all" in more.json()["error"]["errorMessage"] and "member" in more.text
    # Never more than the credential making it: the reader key cannot make a writer.
    wider = await call(
        client, "api-keys.create", {"name": "w", "scopes": ["write_documents"]}, reader
    )
    assert wider.status_code == 403  # it lacks write_api_keys itself, so refused before
    narrow_secret = (
        await call(
            client,
            "api-keys.create",
            {"name": "maker", "scopes": ["read_documents", "write_api_keys", "read_api_keys"]},
            alice.headers(),
        )
    ).json()["data"]["result"]["apiKey"]
    maker = {"Authorization": f"Bearer {narrow_secret}"}
    refused = await call(
        client, "api-keys.create", {"name": "w", "scopes": ["write_documents"]}, maker
    )
    assert refused.status_code == 403
    assert refused.json()["error"]["errorMessage"] == (
        "This credential lacks the scope: write_documents"
    )


async def test_a_keys_last_use_is_recorded(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    made = (await call(client, "api-keys.create", {"name": "used"}, alice.headers())).json()
    key_id = made["data"]["result"]["key"]["id"]
    assert made["data"]["result"]["key"]["lastUsedAt"] is None
    own = {"Authorization": f"Bearer {made['data']['result']['apiKey']}"}
    assert (await call(client, "workspaces.list", {}, own)).status_code == 200
    listed = (await call(client, "api-keys.list", {}, alice.headers())).json()["data"]["result"]
    used = next(k for k in listed["keys"] if k["id"] == key_id)
    assert used["lastUsedAt"] is not None
    bootstrap = next(k for k in listed["keys"] if k["name"] == "bootstrap")
    assert bootstrap["origin"] == "bootstrap" and bootstrap["lastUsedAt"] is not None


async def test_a_store_refusing_writes_does_not_refuse_the_key(
    client: httpx.AsyncClient, store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recording the last use is a convenience: when the store refuses the write (a full disk,
    no primary), the key still reads."""
    from pymongo.errors import WriteConcernError

    tried: list[str] = []

    async def refuse(*args: object, **kwargs: object) -> None:
        tried.append("update")
        raise WriteConcernError("no primary")

    monkeypatch.setattr(store.api_keys._col, "update_one", refuse)
    listed = await call(client, "workspaces.list", {}, alice.headers())
    assert listed.status_code == 200, listed.text
    assert tried == ["update"]
