"""Who may read an approval request and what it reveals; the requester authorized again when the
approved call runs; the "another person must approve" setting. REST and GraphQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from resolvers.framework.registry import Registry
from resolvers.resources import approvals, documents, members
from schema.secrets import REDACTED
from tests.approvals import secret_stand_in
from tests.approvals.test_approvals import EDIT, category_of, message
from tests.conftest import Tenant, app_on, member_of
from tests.documents.conftest import KNOWN, call, result
from tests.rules.test_notifications import _keyring

WEBHOOK_RULE = "Post to https://hooks.example.com/fincap whenever an invoice over $2,500 arrives"


@pytest.fixture
async def seeded(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, KNOWN)
    return alice


async def scoped_key(store: Store, tenant: Tenant, scopes: list[str]) -> Tenant:
    """Another key of the same person, holding only ``scopes``."""
    secret = new_api_key_secret()
    await store.api_keys.create(tenant.user_id, secret, scopes=scopes)
    return Tenant(tenant.user_id, tenant.org_id, secret)


async def request_edit(client: httpx.AsyncClient, who: Tenant) -> str:
    waiting = result(await call(client, who, "documents.bulk-edit", EDIT))
    assert waiting["status"] == "approval_required"
    return str(waiting["approvalRequestId"])


# -- reading -------------------------------------------------------------------------------


async def test_a_rules_webhook_secret_never_reaches_the_approval_record(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    """The reported hole: approvals.get returned a rule's signing secret to any member."""
    carol = await member_of(store, seeded, "carol@example.com")
    erin = await member_of(store, seeded, "erin@example.com")
    asked = result(
        await call(
            client, carol, "rules.execute", {"naturalLanguageRule": WEBHOOK_RULE, "confirm": True}
        )
    )
    request_id = asked["approvalRequestId"]
    approved = result(
        await call(client, seeded, "approvals.approve", {"approvalRequestId": request_id})
    )
    # The approver, who ran the call, is shown the new secret once.
    secret = approved["result"]["webhookSecret"]
    assert isinstance(secret, str) and len(secret) > 20
    # It is stored nowhere in the request, and read as [redacted] by the requester.
    raw = await store.db["approval_requests"].find_one({"_id": request_id})
    assert secret not in str(raw)
    shown = result(await call(client, carol, "approvals.get", {"approvalRequestId": request_id}))
    assert shown["status"] == "executed" and shown["result"]["webhookSecret"] == REDACTED
    # Another plain member may not read the request at all.
    refused = await call(client, erin, "approvals.get", {"approvalRequestId": request_id})
    assert refused.status_code == 403 and "requester" in message(refused)
    # The rule keeps it encrypted, and signs with the very secret the approver saw.
    rule = await store.rules.get(seeded.org_id, approved["result"]["rule"]["id"])
    assert rule is not None and secret not in str(rule["webhookSecret"])
    sealed = _keyring(client).decrypt("rule-webhook", rule["webhookSecret"], rule["_id"].encode())
    assert sealed.decode() == secret


async def test_reading_a_request_needs_the_read_scope_of_what_it_gates(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    """The reported hole: a token whose only scope was read_currency read bulk-edit results."""
    request_id = await request_edit(client, seeded)
    currency_only = await scoped_key(store, seeded, ["read_currency"])
    for slug in ("approvals.get", "approvals.reject"):
        refused = await call(client, currency_only, slug, {"approvalRequestId": request_id})
        assert refused.status_code == 403, slug
        assert message(refused) == "This credential lacks the scope: read_documents"
    reader = await scoped_key(store, seeded, ["read_documents"])
    shown = result(await call(client, reader, "approvals.get", {"approvalRequestId": request_id}))
    assert shown["capabilitySlug"] == "documents.bulk-edit"


# -- secrets in a stored call --------------------------------------------------------------


@pytest.fixture(scope="module")
def vault_registry() -> Registry:
    """One for the module: its apps then share the GraphQL schema it derives."""
    return Registry.from_modules([approvals, documents, members, secret_stand_in]).freeze()


@pytest.fixture
async def vault_client(store: Store, vault_registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    app = app_on(store, vault_registry)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        yield http


async def test_a_secret_in_a_gated_input_is_sealed_and_redacted(
    vault_client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    secret_stand_in.RECEIVED.clear()
    body = {"name": "books", "password": "hunter2-very-secret", "dryRun": False}
    waiting = result(await call(vault_client, alice, "vault.connect", body))
    request_id = waiting["approvalRequestId"]
    assert "hunter2" not in waiting["description"] and REDACTED in waiting["description"]
    raw = await store.db["approval_requests"].find_one({"_id": request_id})
    assert raw is not None and "hunter2" not in str(raw)
    shown = result(
        await call(vault_client, alice, "approvals.get", {"approvalRequestId": request_id})
    )
    assert shown["input"] == {"name": "books", "password": REDACTED, "dryRun": False}

    approved = result(
        await call(vault_client, alice, "approvals.approve", {"approvalRequestId": request_id})
    )
    # The call ran with the password as it was sent; its own new secret is shown once.
    assert secret_stand_in.RECEIVED == ["hunter2-very-secret"]
    assert approved["result"]["token"] == "vault-token-secret"
    after = result(
        await call(vault_client, alice, "approvals.get", {"approvalRequestId": request_id})
    )
    assert after["result"]["token"] == REDACTED
    raw = await store.db["approval_requests"].find_one({"_id": request_id})
    assert "vault-token-secret" not in str(raw) and "hunter2" not in str(raw)


# -- authorized again when the call runs ---------------------------------------------------


async def test_a_revoked_key_approves_nothing(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    carol = await member_of(store, seeded, "carol@example.com")
    request_id = await request_edit(client, carol)
    key = await store.api_keys.find_active(carol.api_key)
    assert key is not None
    await store.api_keys.revoke(carol.user_id, key["_id"])
    refused = await call(client, seeded, "approvals.approve", {"approvalRequestId": request_id})
    assert refused.status_code == 403
    assert "the API key they used was revoked" in message(refused)
    assert await category_of(client, seeded, "doc_a") == "Meals"
    shown = result(await call(client, seeded, "approvals.get", {"approvalRequestId": request_id}))
    assert shown["status"] == "pending" and "revoked" in shown["lastError"]


async def test_a_removed_member_approves_nothing(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    carol = await member_of(store, seeded, "carol@example.com")
    request_id = await request_edit(client, carol)
    result(await call(client, seeded, "members.remove", {"userId": carol.user_id}))
    refused = await call(client, seeded, "approvals.approve", {"approvalRequestId": request_id})
    assert refused.status_code == 403 and "no longer a member" in message(refused)
    assert await category_of(client, seeded, "doc_a") == "Meals"


async def test_a_lowered_role_approves_nothing(
    vault_client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    dave = await member_of(store, alice, "dave@example.com", "admin")
    secret_stand_in.RECEIVED.clear()
    body = {"name": "books", "password": "pw", "dryRun": False}
    request_id = result(await call(vault_client, dave, "vault.connect", body))["approvalRequestId"]
    result(
        await call(
            vault_client, alice, "members.set-role", {"userId": dave.user_id, "role": "member"}
        )
    )
    refused = await call(
        vault_client, alice, "approvals.approve", {"approvalRequestId": request_id}
    )
    assert refused.status_code == 403
    assert "vault.connect is for the workspace's owners and admins" in message(refused)
    assert secret_stand_in.RECEIVED == []


async def test_a_revoked_or_narrowed_grant_approves_nothing(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    carol = await member_of(store, seeded, "carol@example.com")
    grant = {
        "familyId": "fam_carol",
        "clientId": "client_1",
        "userId": carol.user_id,
        "workspaceId": seeded.org_id,
        "scopes": ["read_documents", "write_documents"],
    }
    expires = datetime.now(UTC) + timedelta(hours=1)
    await store.oauth_tokens.create("fat_carol_1", "access", grant, expires)
    as_token = Tenant(carol.user_id, seeded.org_id, "fat_carol_1")
    first = await request_edit(client, as_token)
    second = await request_edit(client, as_token)
    # A refresh narrowed the grant to reading: the requester cannot edit any more.
    narrowed = {**grant, "scopes": ["read_documents"]}
    await store.oauth_tokens.create("fat_carol_2", "access", narrowed, expires)
    refused = await call(client, seeded, "approvals.approve", {"approvalRequestId": first})
    assert refused.status_code == 403 and "no longer holds the scope write_documents" in (
        message(refused)
    )
    # Then the grant is revoked.
    await store.oauth_tokens.revoke_family("fam_carol")
    refused = await call(client, seeded, "approvals.approve", {"approvalRequestId": second})
    assert refused.status_code == 403 and "OAuth grant" in message(refused)
    assert await category_of(client, seeded, "doc_a") == "Meals"


async def test_a_request_made_in_the_dashboard_outlives_its_sign_in(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    """The dashboard is the person: signing out (its grant revoked) does not withdraw what they
    asked there, as it does not end the keys they made there; leaving the workspace still
    does (seen refused "OAuth grant" on the old code)."""
    carol = await member_of(store, seeded, "carol@example.com")
    grant = {
        "familyId": "fam_carol_dash",
        "clientId": "fincap-dashboard",
        "userId": carol.user_id,
        "workspaceId": seeded.org_id,
        "scopes": ["read_documents", "write_documents"],
    }
    expires = datetime.now(UTC) + timedelta(hours=1)
    await store.oauth_tokens.create("fat_carol_dash", "access", grant, expires)
    as_dashboard = Tenant(carol.user_id, seeded.org_id, "fat_carol_dash")
    first = await request_edit(client, as_dashboard)
    second = await request_edit(client, as_dashboard)
    await store.oauth_tokens.revoke_family("fam_carol_dash")  # Carol signed out
    approved = await call(client, seeded, "approvals.approve", {"approvalRequestId": first})
    assert approved.status_code == 200, approved.text
    assert result(approved)["status"] == "executed"
    assert await category_of(client, seeded, "doc_a") != "Meals"
    await store.workspaces.remove_member(seeded.org_id, carol.user_id, may_touch_owner=False)
    refused = await call(client, seeded, "approvals.approve", {"approvalRequestId": second})
    assert refused.status_code == 403 and "no longer a member" in message(refused)


# -- another person must approve -----------------------------------------------------------


async def test_another_person_must_approve_when_the_workspace_says_so(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    dave = await member_of(store, seeded, "dave@example.com", "admin")
    settings = result(await call(client, seeded, "approvals.settings", {}))
    assert settings["requireOtherApprover"] is False
    # The default: an owner approves their own request.
    own = await request_edit(client, seeded)
    result(await call(client, seeded, "approvals.approve", {"approvalRequestId": own}))

    refused = await call(client, dave, "approvals.configure", {})
    assert refused.status_code == 400 and "requireOtherApprover" in message(refused)
    half = await call(
        client, dave, "approvals.configure", {"capabilitySlug": "documents.bulk-edit"}
    )
    assert half.status_code == 400 and "go together" in message(half)
    narrow = await scoped_key(store, seeded, ["write_documents"])
    lacking = await call(client, narrow, "approvals.configure", {"requireOtherApprover": True})
    assert lacking.status_code == 403 and "write_workspaces" in message(lacking)
    changed = result(
        await call(client, seeded, "approvals.configure", {"requireOtherApprover": True})
    )
    assert changed["requireOtherApprover"] is True

    mine = await request_edit(client, seeded)
    refused = await call(client, seeded, "approvals.approve", {"approvalRequestId": mine})
    assert refused.status_code == 403 and "another person" in message(refused)
    approved = result(await call(client, dave, "approvals.approve", {"approvalRequestId": mine}))
    assert approved["status"] == "executed"


async def test_loosening_a_gate_needs_the_scopes_of_what_it_gates(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    integrations_only = await scoped_key(store, seeded, ["write_integrations"])
    refused = await call(
        client,
        integrations_only,
        "approvals.configure",
        {"capabilitySlug": "documents.bulk-edit", "gated": False},
    )
    assert refused.status_code == 403 and "write_documents" in message(refused)
    allowed = await call(
        client,
        integrations_only,
        "approvals.configure",
        {"capabilitySlug": "integrations.send", "gated": False},
    )
    assert allowed.status_code == 200, allowed.text


async def test_the_settings_through_graphql(client: httpx.AsyncClient, seeded: Tenant) -> None:
    query = (
        "mutation { approvalsConfigure(input: {requireOtherApprover: true}) "
        "{ requireOtherApprover } }"
    )
    response = await client.post("/v1/graphql", json={"query": query}, headers=seeded.headers())
    assert response.json()["data"]["approvalsConfigure"] == {"requireOtherApprover": True}
    read = await client.post(
        "/v1/graphql",
        json={"query": "{ approvalsSettings { requireOtherApprover capabilities { slug } } }"},
        headers=seeded.headers(),
    )
    assert read.json()["data"]["approvalsSettings"]["requireOtherApprover"] is True
