"""Remembered consent through the ASGI app: a second sign-in with the same client and scopes
goes straight back with a code; wider scopes ask again; revoking the grant or leaving the
workspace forgets the consent."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import httpx

from persistence.store import Store
from tests.conftest import Tenant, member_of
from tests.mcp import oauth_client as oc
from tests.mcp.conftest import PASSWORD

SCOPE = "read_documents write_documents"


async def allow_once(http: httpx.AsyncClient, client_id: str, workspace: str) -> dict[str, str]:
    """The first sign-in: the consent page is shown and allowed; the tokens."""
    started, verifier = await oc.start(http, client_id, SCOPE)
    page = await oc.sign_in_page(http, started)
    consent = await oc.submit_sign_in(http, page, "alice@example.com", PASSWORD)
    assert consent.status_code == 200 and 'value="allow"' in consent.text
    query = await oc.consent(http, consent.text, workspace)
    tokens = await oc.exchange(http, client_id, query["code"][0], verifier)
    assert tokens.status_code == 200, tokens.text
    return dict(tokens.json())


async def again(http: httpx.AsyncClient, client_id: str, scope: str) -> httpx.Response:
    """A later sign-in in the same browser (the sign-in cookie is still set): what the
    authorization's sign-in step answers."""
    started, _ = await oc.start(http, client_id, scope, state="st-2")
    assert started.status_code == 302, started.text
    return await http.get(started.headers["location"])


async def test_same_client_and_scopes_skip_the_consent_page(
    http: httpx.AsyncClient, person: Tenant, store: Store
) -> None:
    client = await oc.register(http)
    await allow_once(http, client.client_id, person.org_id)
    answer = await again(http, client.client_id, SCOPE)
    assert answer.status_code == 303, answer.text  # no consent page
    target = urlparse(answer.headers["location"])
    assert target.geturl().startswith(oc.REDIRECT_URI)
    query = parse_qs(target.query)
    assert query["state"] == ["st-2"] and query["code"][0]
    # Fewer scopes are within what was allowed: still no page.
    assert (await again(http, client.client_id, "read_documents")).status_code == 303
    # Wider scopes ask again.
    wider = await again(http, client.client_id, SCOPE + " read_workspaces")
    assert wider.status_code == 200 and 'value="allow"' in wider.text
    # Another client of the same user is asked too.
    other = await oc.register(http)
    first = await again(http, other.client_id, SCOPE)
    assert first.status_code == 200 and 'value="allow"' in first.text


async def test_revoking_the_grant_forgets_the_consent(
    http: httpx.AsyncClient, person: Tenant
) -> None:
    client = await oc.register(http)
    tokens = await allow_once(http, client.client_id, person.org_id)
    assert (await again(http, client.client_id, SCOPE)).status_code == 303  # remembered
    revoked = await http.post(
        "/v1/oauth/revoke",
        data={"token": tokens["refresh_token"], "client_id": client.client_id},
    )
    assert revoked.status_code == 200
    asked = await again(http, client.client_id, SCOPE)
    assert asked.status_code == 200 and 'value="allow"' in asked.text


async def test_removal_from_the_workspace_forgets_the_consent(
    http: httpx.AsyncClient, person: Tenant, store: Store
) -> None:
    client = await oc.register(http)
    await allow_once(http, client.client_id, person.org_id)
    assert (await again(http, client.client_id, SCOPE)).status_code == 303  # remembered
    # Another owner removes Alice; she is added back: her old consent does not come back.
    other = await member_of(store, person, "olga@example.com", "owner")
    removed = await http.post(
        "/v1/capabilities/members.remove", json={"userId": person.user_id}, headers=other.headers()
    )
    assert removed.status_code == 200, removed.text
    await store.workspaces.add_member(person.org_id, person.user_id, "member")
    asked = await again(http, client.client_id, SCOPE)
    assert asked.status_code == 200 and 'value="allow"' in asked.text
