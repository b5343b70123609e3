"""One-time sign-in links through the ASGI app: a link opens the dashboard's sign-in session
of its person (the dashboard's sign-in then needs no password and opens the link's
workspace); it works once, within its lifetime, is stored hashed, and a used, expired or
foreign one is a clear 410, never a 500."""

from __future__ import annotations

import html
from datetime import timedelta
from urllib.parse import parse_qs, urlparse

import httpx
import pytest
from starlette.applications import Starlette

from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.errors import BadRequest
from resolvers.services.auth import accounts, sign_in_links
from resolvers.services.auth.sign_in_links import LINK_REFUSED, LINK_TTL
from tests.conftest import Tenant
from tests.mcp import oauth_client as oc
from tests.mcp.test_oauth_dashboard_client import authorize, browser, dashboard_client

LINK = "/v1/oauth/sign-in-link"


async def use(http: httpx.AsyncClient, secret: str) -> httpx.Response:
    return await http.post(LINK, json={"token": secret})


async def dashboard_sign_in(http: httpx.AsyncClient) -> dict[str, str]:
    """The dashboard's sign-in in a browser that used a link: no password page, straight back
    with a code; the token response."""
    known = await dashboard_client(http)
    started, verifier = await authorize(http, known)
    assert started.status_code == 302, started.text
    page = await http.get(started.headers["location"])
    assert page.status_code == 303, page.text  # no sign-in form, no consent page
    code = parse_qs(urlparse(page.headers["location"]).query)["code"][0]
    tokens = await oc.exchange(
        http, known["client_id"], code, verifier, redirect_uri=known["redirect_uri"]
    )
    assert tokens.status_code == 200, tokens.text
    return dict(tokens.json())


async def test_a_link_signs_in_once_into_its_workspace(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    side = await accounts.create_workspace(store, "alice@example.com", "Side")
    link = await sign_in_links.issue(store, "alice@example.com", side["orgId"])
    url = sign_in_links.link_url("https://fincap.test/", link["secret"])
    assert url == f"https://fincap.test/app/#/sign-in-link/{link['secret']}"
    stored = await store.db["sign_in_links"].find_one({})
    assert stored is not None and link["secret"] not in str(stored)  # only its digest
    assert stored["userId"] == alice.user_id and stored["workspaceId"] == side["orgId"]

    async with browser(app) as http:
        used = await use(http, link["secret"])
        assert used.status_code == 200, used.text
        tokens = await dashboard_sign_in(http)
    listed = await httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="https://fincap.test"
    ).post(
        "/v1/capabilities/workspaces.list",
        json={},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )
    assert listed.status_code == 200, listed.text
    # The link's workspace, though Alice has two (she was asked nothing).
    current = listed.json()["data"]["result"]["currentOrgId"]
    assert current == side["orgId"]

    async with browser(app) as other:
        again = await use(other, link["secret"])
    assert again.status_code == 410
    assert again.json()["error_description"] == LINK_REFUSED
    assert "fincap admin sign-in-link" in LINK_REFUSED
    assert "fincap_oauth_session" not in again.cookies


async def test_expired_unknown_and_malformed_links_are_refused_plainly(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    old = await sign_in_links.issue(
        store, "alice@example.com", now=utcnow() - LINK_TTL - timedelta(seconds=1)
    )
    async with browser(app) as http:
        assert (await use(http, old["secret"])).status_code == 410
        assert (await use(http, "sil_" + "x" * 43)).status_code == 410
        assert (await use(http, "sil_\u00e9")).status_code == 410
        assert (await use(http, "sil_" + "x" * 5000)).status_code in (400, 410)
        no_token = await http.post(LINK, json={})
        assert no_token.status_code == 400 and "token" in no_token.text
        form = await http.post(LINK, data={"token": old["secret"]})
        assert form.status_code == 415  # another site's form cannot post it
        broken = await http.post(LINK, content=b"{", headers={"Content-Type": "application/json"})
        assert broken.status_code == 400


async def test_a_link_ends_when_its_person_leaves_the_workspace(
    app: Starlette, store: Store, alice: Tenant, bob: Tenant
) -> None:
    await store.workspaces.add_member(bob.org_id, alice.user_id, "member")
    link = await sign_in_links.issue(store, "alice@example.com", bob.org_id)
    await store.workspaces.remove_member(bob.org_id, alice.user_id, may_touch_owner=False)
    async with browser(app) as http:
        assert (await use(http, link["secret"])).status_code == 410
    with pytest.raises(BadRequest, match="not a member"):
        await sign_in_links.issue(store, "alice@example.com", bob.org_id)


async def test_a_failed_sign_in_says_how_to_get_a_password_or_a_link(
    app: Starlette, person: Tenant
) -> None:
    async with browser(app) as http:
        known = await dashboard_client(http)
        started, _ = await authorize(http, known)
        page = await oc.sign_in_page(http, started)
        refused = await oc.submit_sign_in(http, page, "alice@example.com", "not her password")
    assert refused.status_code == 401
    text = html.unescape(refused.text)
    assert "fincap admin set-password --email you@example.com" in text
    assert "fincap admin sign-in-link --email you@example.com" in text
