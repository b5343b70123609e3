"""The OAuth 2.1 authorization server through the ASGI app: metadata, registration, the pages,
PKCE, code and refresh-token rules, revocation, and the tokens on REST and GraphQL."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from starlette.applications import Starlette

from persistence.ids import utcnow
from persistence.oauth import digest
from persistence.store import Store
from resolvers.framework.registry import SCOPES
from tests.conftest import Tenant
from tests.mcp import oauth_client as oc
from tests.mcp.conftest import PASSWORD


def bearer(token: str, org: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}"}
    if org:
        headers["X-Service-Org-Id"] = org
    return headers


async def search(http: httpx.AsyncClient, token: str, org: str | None = None) -> httpx.Response:
    return await http.post(
        "/v1/capabilities/documents.search", json={"limit": 1}, headers=bearer(token, org)
    )


async def test_metadata_at_the_mcp_and_host_root_paths(http: httpx.AsyncClient) -> None:
    for path in ("/mcp/.well-known/oauth-authorization-server",
                 "/.well-known/oauth-authorization-server"):  # fmt: skip
        server = (await http.get(path)).json()
        assert server["issuer"] == "https://fincap.test"
        assert server["authorization_endpoint"] == "https://fincap.test/v1/oauth/authorize"
        assert server["token_endpoint"] == "https://fincap.test/v1/oauth/token"
        assert server["registration_endpoint"] == "https://fincap.test/v1/oauth/register"
        assert server["revocation_endpoint"] == "https://fincap.test/v1/oauth/revoke"
        assert server["code_challenge_methods_supported"] == ["S256"]
        assert server["scopes_supported"] == list(SCOPES)
    for path in ("/mcp/.well-known/oauth-protected-resource",
                 "/.well-known/oauth-protected-resource/mcp"):  # fmt: skip
        resource = (await http.get(path)).json()
        assert resource["resource"] == "https://fincap.test/mcp"
        assert resource["authorization_servers"] == ["https://fincap.test"]
        assert resource["scopes_supported"] == list(SCOPES)


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://app.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_client_metadata"),
        ({"scope": "read_documents fly_rockets"}, "invalid_client_metadata"),
        ({"grant_types": ["password"]}, "invalid_client_metadata"),
    ],
)
async def test_registration_refuses_bad_metadata(
    http: httpx.AsyncClient, store: Store, metadata: dict[str, object], error: str
) -> None:
    body = {"client_name": "x", "redirect_uris": [oc.REDIRECT_URI], **metadata}
    response = await http.post("/v1/oauth/register", json=body)
    assert response.status_code == 400
    assert response.json()["error"] == error
    assert await store.db["oauth_clients"].count_documents({}) == 0


async def test_the_whole_flow_then_rest_and_graphql(
    http: httpx.AsyncClient, store: Store, person: Tenant, bob: Tenant
) -> None:
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    assert tokens["token_type"] == "Bearer"
    assert tokens["expires_in"] == 3600
    assert tokens["scope"] == "read_documents write_documents"
    access, refresh = tokens["access_token"], tokens["refresh_token"]
    assert access.startswith("fat_") and refresh.startswith("frt_")

    # REST: the token's workspace is the org context, no header needed.
    assert (await search(http, access)).status_code == 200
    same = await search(http, access, person.org_id)
    assert same.status_code == 200
    other = await search(http, access, bob.org_id)
    assert other.status_code == 403
    assert "bound to a different workspace" in other.json()["error"]["errorMessage"]
    # A scope the token lacks: 403 naming it.
    convert = await http.post(
        "/v1/capabilities/currency.convert",
        json={"amount": 1, "fromCurrency": "EUR", "toCurrency": "USD"},
        headers=bearer(access),
    )
    assert convert.status_code == 403
    assert "read_currency" in convert.json()["error"]["errorMessage"]
    # GraphQL takes the same bearer.
    graph = await http.post(
        "/v1/graphql",
        json={"query": "{ documentsSearch(input: {limit: 1}) { documents { id } } }"},
        headers=bearer(access),
    )
    assert graph.status_code == 200 and "errors" not in graph.json(), graph.text

    # Stored only as digests.
    raw = await store.db["oauth_tokens"].find({}).to_list(None)
    assert {r["_id"] for r in raw} == {digest(access), digest(refresh)}
    assert access not in str(raw) and refresh not in str(raw)


async def test_authorization_request_errors(http: httpx.AsyncClient, person: Tenant) -> None:
    client = await oc.register(http, scope="read_documents")
    # A scope outside the client's (or the server's) list: a page saying so, no redirect back
    # to the client (RFC 9700 §4.11.2; test_oauth_hardening tries every kind of error).
    response, _ = await oc.start(http, client.client_id, "read_documents write_rules")
    assert response.status_code == 400 and "location" not in response.headers
    assert "invalid_scope" in response.text
    # A redirect URI that is not registered exactly: no redirect at all.
    bad = await http.get(
        "/v1/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": oc.REDIRECT_URI + "/x",
            "code_challenge": "x" * 43,
            "code_challenge_method": "S256",
        },
    )
    assert bad.status_code == 400 and "location" not in bad.headers
    # PKCE plain is refused.
    plain = await http.get(
        "/v1/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": oc.REDIRECT_URI,
            "code_challenge": "x" * 43,
            "code_challenge_method": "plain",
            "state": "s",
        },
    )
    assert plain.status_code == 400 and "location" not in plain.headers
    assert "invalid_request" in plain.text


async def test_sign_in_page_rules(http: httpx.AsyncClient, person: Tenant) -> None:
    client = await oc.register(http)
    started, _ = await oc.start(http, client.client_id, "read_documents")
    page = await oc.sign_in_page(http, started)
    assert "<h1>Sign in to fincap</h1>" in page and "Test Assistant" in page

    wrong = await oc.submit_sign_in(http, page, "alice@example.com", "not the password")
    assert wrong.status_code == 401
    assert "do not match an account" in wrong.text
    assert "fincap_oauth_session" not in http.cookies

    unknown = await oc.submit_sign_in(http, page, "nobody@example.com", PASSWORD)
    assert unknown.status_code == 401

    # Without the CSRF cookie (a form posted from another site) nothing happens.
    fields = {"request": oc.hidden_field(page, "request"), "csrf": oc.hidden_field(page, "csrf"),
              "email": "alice@example.com", "password": PASSWORD}  # fmt: skip
    http.cookies.clear()
    forged = await http.post("/v1/oauth/sign-in", data=fields)
    assert forged.status_code == 403
    # A tampered pending request is refused.
    tampered = await http.get("/v1/oauth/sign-in", params={"request": "e30.AAAA"})
    assert tampered.status_code == 400 and "expired" in tampered.text


async def test_consent_deny_and_foreign_workspace(
    http: httpx.AsyncClient, person: Tenant, bob: Tenant
) -> None:
    client = await oc.register(http)
    started, _ = await oc.start(http, client.client_id, "read_documents", state="keep-me")
    page = await oc.sign_in_page(http, started)
    consent = await oc.submit_sign_in(http, page, "alice@example.com", PASSWORD)
    assert "Alice Co" in consent.text and "Read your receipts" in consent.text
    assert bob.org_id not in consent.text  # only the user's own workspaces are offered

    foreign = await http.post(
        "/v1/oauth/consent",
        data={
            "request": oc.hidden_field(consent.text, "request"),
            "csrf": oc.hidden_field(consent.text, "csrf"),
            "workspace": bob.org_id,
            "decision": "allow",
        },
    )
    assert foreign.status_code == 400 and "Choose one of your workspaces" in foreign.text

    denied = await oc.consent(http, consent.text, person.org_id, decision="deny")
    assert denied["error"] == ["access_denied"] and denied["state"] == ["keep-me"]


async def test_codes_are_single_use_and_bound_to_the_verifier(
    http: httpx.AsyncClient, person: Tenant
) -> None:
    client = await oc.register(http)
    started, verifier = await oc.start(http, client.client_id, "read_documents")
    page = await oc.sign_in_page(http, started)
    consent = await oc.submit_sign_in(http, page, "alice@example.com", PASSWORD)
    code = (await oc.consent(http, consent.text, person.org_id))["code"][0]

    wrong = await oc.exchange(http, client.client_id, code, "x" * 50)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    first = await oc.exchange(http, client.client_id, code, verifier)
    assert first.status_code == 200
    access = first.json()["access_token"]
    assert (await search(http, access)).status_code == 200
    # A second exchange fails, and ends what the first one got.
    second = await oc.exchange(http, client.client_id, code, verifier)
    assert second.status_code == 400 and second.json()["error"] == "invalid_grant"
    assert (await search(http, access)).status_code == 401


async def test_refresh_rotation_and_reuse_detection(
    http: httpx.AsyncClient, person: Tenant
) -> None:
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    client_id, first_refresh = tokens["client_id"], tokens["refresh_token"]

    rotated = await oc.refresh(http, client_id, first_refresh)
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()
    assert second["refresh_token"] != first_refresh
    assert (await search(http, second["access_token"])).status_code == 200

    # The rotated token presented again: refused, and the whole family ends.
    reused = await oc.refresh(http, client_id, first_refresh)
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert (await search(http, second["access_token"])).status_code == 401
    after = await oc.refresh(http, client_id, second["refresh_token"])
    assert after.status_code == 400


async def test_revocation_ends_the_family(http: httpx.AsyncClient, person: Tenant) -> None:
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    revoked = await http.post(
        "/v1/oauth/revoke",
        data={"token": tokens["access_token"], "client_id": tokens["client_id"]},
    )
    assert revoked.status_code == 200, revoked.text
    assert (await search(http, tokens["access_token"])).status_code == 401
    dead = await oc.refresh(http, tokens["client_id"], tokens["refresh_token"])
    assert dead.status_code == 400


async def test_an_expired_token_is_refused(
    http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    access = tokens["access_token"]
    await store.db["oauth_tokens"].update_one(
        {"_id": digest(access)}, {"$set": {"expiresAt": utcnow() - timedelta(seconds=1)}}
    )
    assert (await search(http, access)).status_code == 401


async def test_a_removed_membership_ends_access(
    app: Starlette, http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    access = tokens["access_token"]
    assert (await search(http, access)).status_code == 200
    await store.db["memberships"].delete_one({"userId": person.user_id})
    # What removes a member tells the auth cache (other processes follow within its TTL).
    app.state.services.auth_cache.forget_member(person.user_id, person.org_id)
    assert (await search(http, access)).status_code == 403
