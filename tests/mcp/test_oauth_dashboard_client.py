"""The dashboard's first-party OAuth client through the ASGI app: the server names it (no
registration), every browser signs in with the same client, so the consent given in one holds
in the next; its codes go only to the dashboard on the service's public address; it is the
same client after a restart; third-party registration is unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import httpx
from starlette.applications import Starlette

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, app_on
from tests.mcp import oauth_client as oc
from tests.mcp.conftest import PASSWORD

PUBLIC = "https://fincap.test"


@asynccontextmanager
async def browser(app: Starlette, base: str = PUBLIC) -> AsyncIterator[httpx.AsyncClient]:
    """A browser of its own: no cookies, no storage shared with any other."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=base) as client:
        yield client


async def dashboard_client(http: httpx.AsyncClient) -> dict[str, Any]:
    """What the dashboard page asks before it signs in."""
    answer = await http.get("/v1/oauth/dashboard-client")
    assert answer.status_code == 200, answer.text
    known: dict[str, Any] = answer.json()
    return known


async def authorize(
    http: httpx.AsyncClient,
    known: dict[str, Any],
    redirect_uri: str | None = None,
    **extra: str,
) -> tuple[httpx.Response, str]:
    verifier, challenge = oc.pkce_pair()
    params = {
        **extra,
        "response_type": "code",
        "client_id": known["client_id"],
        "redirect_uri": redirect_uri or known["redirect_uri"],
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-dash",
        "scope": known["scope"],
    }
    return await http.get(f"/v1/oauth/authorize?{urlencode(params)}"), verifier


async def allow(http: httpx.AsyncClient, consent_page: str, workspace: str) -> httpx.Response:
    """Press Allow on the consent page for ``workspace``."""
    return await http.post(
        "/v1/oauth/consent",
        data={
            "request": oc.hidden_field(consent_page, "request"),
            "csrf": oc.hidden_field(consent_page, "csrf"),
            "workspace": workspace,
            "decision": "allow",
        },
    )


async def sign_in(
    http: httpx.AsyncClient, workspace: str, **extra: str
) -> tuple[bool, dict[str, Any]]:
    """One dashboard sign-in in ``http``'s browser, as the page runs it: whether the consent
    page was shown (and allowed), and the token response."""
    known = await dashboard_client(http)
    started, verifier = await authorize(http, known, **extra)
    page = await oc.sign_in_page(http, started)
    answer = await oc.submit_sign_in(http, page, "alice@example.com", PASSWORD)
    asked = answer.status_code == 200
    if asked:
        assert 'value="allow"' in answer.text and "fincap dashboard" in answer.text
        answer = await allow(http, answer.text, workspace)
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith(known["redirect_uri"] + "?"), location
    code = parse_qs(urlparse(location).query)["code"][0]
    tokens = await oc.exchange(
        http, known["client_id"], code, verifier, redirect_uri=known["redirect_uri"]
    )
    assert tokens.status_code == 200, tokens.text
    return asked, dict(tokens.json())


async def clients(store: Store) -> list[dict[str, Any]]:
    return [row async for row in store.db["oauth_clients"].find({})]


async def test_the_server_names_the_dashboard_client_on_its_public_address(
    app: Starlette,
) -> None:
    async with browser(app) as http:
        known = await dashboard_client(http)
    assert known["redirect_uri"] == f"{PUBLIC}/app/"
    assert set(known["scope"].split()) >= {"read_documents", "write_documents"}
    assert known["client_id"]


async def test_two_browsers_sign_in_with_one_client_and_no_consent_page(
    app: Starlette, person: Tenant, store: Store
) -> None:
    """The dashboard is the person: no consent page (seen asking on the old code), and the
    grant holds every scope the role allows (the owner: all of them, so "Send to accounting…"
    finds read_integrations; seen failing with the dashboard's former six scopes)."""
    async with browser(app) as first:
        asked, tokens = await sign_in(first, person.org_id)
    assert not asked  # one workspace: nothing to choose, nothing to consent to
    assert set(tokens["scope"].split()) >= {"all", "read_integrations", "write_integrations"}
    async with browser(app) as second:
        asked_again, again = await sign_in(second, person.org_id)
    assert not asked_again
    assert again["access_token"] != tokens["access_token"]
    stored = await clients(store)
    assert len(stored) == 1, stored
    assert stored[0]["metadata"]["redirect_uris"] == [f"{PUBLIC}/app/"]
    assert "unusedUntil" not in stored[0]  # never removed as unused
    # The token works in the workspace chosen.
    async with browser(app) as http:
        listed = await http.post(
            "/v1/capabilities/workspaces.list",
            json={},
            headers={"Authorization": f"Bearer {again['access_token']}"},
        )
    assert listed.status_code == 200, listed.text


async def test_signing_out_keeps_the_choice_and_prompt_consent_asks_again(
    app: Starlette, person: Tenant
) -> None:
    """The dashboard's sign-out revokes its tokens (RFC 7009) but is not a withdrawal of
    consent: the next sign-in goes straight back. "Another workspace…" asks with
    ``prompt=consent`` and gets the consent page, where the workspace is chosen."""
    async with browser(app) as http:
        asked, tokens = await sign_in(http, person.org_id)
        assert not asked
        known = await dashboard_client(http)
        revoked = await http.post(
            "/v1/oauth/revoke",
            data={"token": tokens["refresh_token"], "client_id": known["client_id"]},
        )
        assert revoked.status_code == 200
        # The sign-in page's session in this browser ended with it: a password is asked again.
        assert "fincap_oauth_session" not in http.cookies
        ended = await http.post(
            "/v1/capabilities/workspaces.list",
            json={},
            headers={"Authorization": f"Bearer {tokens['access_token']}"},
        )
        assert ended.status_code == 401  # signed out: the tokens are gone
        asked, _ = await sign_in(http, person.org_id)
        assert not asked  # the consent is not
        asked, _ = await sign_in(http, person.org_id, prompt="consent")
        assert asked
        refused, _ = await authorize(http, known, prompt="none")
        assert refused.status_code == 400 and "prompt=none" in refused.text


async def test_the_dashboard_client_refuses_a_foreign_redirect_uri(
    app: Starlette, person: Tenant
) -> None:
    async with browser(app) as http:
        known = await dashboard_client(http)
        for foreign in (
            "https://evil.example/app/",
            f"{PUBLIC}/app/elsewhere",
            "http://127.0.0.1:33418/callback",
        ):
            refused, _ = await authorize(http, known, redirect_uri=foreign)
            # A page, never a redirect: the browser goes nowhere.
            assert refused.status_code == 400, (foreign, refused.text)
            assert "location" not in refused.headers
        # A code granted for the dashboard cannot be exchanged for another redirect URI.
        started, verifier = await authorize(http, known)
        page = await oc.sign_in_page(http, started)
        answer = await oc.submit_sign_in(http, page, "alice@example.com", PASSWORD)
        assert answer.status_code == 303, answer.text
        code = parse_qs(urlparse(answer.headers["location"]).query)["code"][0]
        stolen = await http.post(
            "/v1/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": "https://evil.example/app/",
                "client_id": known["client_id"],
                "code_verifier": verifier,
            },
        )
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_request", stolen.text


async def test_the_request_host_does_not_move_the_redirect_uri(
    app: Starlette, person: Tenant, store: Store
) -> None:
    """Reached under another Host, the server still names (and stores) its public address."""
    async with browser(app, "https://evil.example") as http:
        known = await dashboard_client(http)
        started, _ = await authorize(http, known)
    assert known["redirect_uri"] == f"{PUBLIC}/app/"
    assert started.status_code == 302
    assert [c["metadata"]["redirect_uris"] for c in await clients(store)] == [[f"{PUBLIC}/app/"]]


async def test_the_client_survives_a_restart_and_follows_the_public_address(
    store: Store, registry: Registry, person: Tenant
) -> None:
    before = app_on(store, registry, Settings(public_url=PUBLIC))
    async with browser(before) as http:
        asked, _ = await sign_in(http, person.org_id)
        known = await dashboard_client(http)
    assert not asked
    # A new process over the same store: the same client, still one, consent still held.
    after = app_on(store, registry, Settings(public_url=PUBLIC))
    async with browser(after) as http:
        assert (await dashboard_client(http))["client_id"] == known["client_id"]
        asked, _ = await sign_in(http, person.org_id)
    assert not asked
    assert len(await clients(store)) == 1
    # Moved to another public address: the same client, its redirect URI moved with it.
    moved = app_on(store, registry, Settings(public_url="https://books.example"))
    async with browser(moved, "https://books.example") as http:
        asked, _ = await sign_in(http, person.org_id)
        old, _ = await authorize(http, known)  # the old address's redirect URI
    assert not asked and old.status_code == 400
    stored = await clients(store)
    assert [c["metadata"]["redirect_uris"] for c in stored] == [["https://books.example/app/"]]


async def test_third_party_registration_is_unchanged(app: Starlette, person: Tenant) -> None:
    async with browser(app) as http:
        registered = await oc.register(http)
        assert registered.client_id != (await dashboard_client(http))["client_id"]
        tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    assert tokens["access_token"]


async def test_a_member_gets_their_roles_scopes_and_chooses_among_workspaces_once(
    app: Starlette, store: Store, person: Tenant, bob: Tenant
) -> None:
    """Alice, a member of Bob's workspace besides her own: the page asks her once which
    workspace (no other question), remembers it, and her grant there holds what a member may
    use: no ``all`` (billing.change-plan is the owners')."""
    await store.workspaces.add_member(bob.org_id, person.user_id, "member")
    async with browser(app) as http:
        asked, tokens = await sign_in(http, bob.org_id)
        assert asked  # two workspaces: the page asks which
    async with browser(app) as http:
        again_asked, again = await sign_in(http, bob.org_id)
    assert not again_asked
    for grant in (tokens, again):
        scopes = set(grant["scope"].split())
        assert "all" not in scopes and {"read_integrations", "write_api_keys"} <= scopes
