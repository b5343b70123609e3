"""The OAuth server against a stranger: registration bounded and rate-limited, redirect URIs
limited to what RFC 8252 allows, invalid authorization requests answered with a page (never a
redirect), the consent page naming where the browser goes, tokens bound to the resource they
were granted for (RFC 8707), and sign-in slowed down per account and per address."""

from __future__ import annotations

import threading
import weakref
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from app.host.config import Settings
from persistence import sign_in_failures
from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.auth import oauth, sign_in_throttle
from resolvers.services.auth.oauth_registration import (
    MAX_REGISTRATION_BYTES,
    REGISTRATIONS_PER_ADDRESS,
    UNUSED_CLIENT_TTL,
)
from resolvers.services.auth.sign_in_throttle import ACCOUNT_FREE_FAILURES, ADDRESS_FREE_FAILURES
from tests.clock import ManualClock
from tests.conftest import Tenant, app_on
from tests.mcp import oauth_client as oc
from tests.mcp.conftest import PASSWORD
from tests.mcp.test_mcp_face import rpc

BASE = "https://fincap.test"
CONTEXT_CALL = {"name": "workspace_get_context", "arguments": {}}


def client_at(app: Starlette, address: str) -> httpx.AsyncClient:
    """The app as seen from ``address`` (the throttles count per client address)."""
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url=BASE)


@pytest.fixture
async def stranger(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    async with client_at(app, "203.0.113.7") as http:
        yield http


def registration(**metadata: Any) -> dict[str, Any]:
    return {
        "client_name": "Test Assistant",
        "redirect_uris": [oc.REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }


# -- registration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metadata", "status", "says"),
    [
        ({"client_name": "x" * 10_000_000}, 413, f"at most {MAX_REGISTRATION_BYTES} bytes"),
        ({"client_name": "x" * 121}, 400, "client_name: at most 120 characters"),
        ({"redirect_uris": [f"{oc.REDIRECT_URI}/{n}" for n in range(11)]}, 400, "at most 10"),
        ({"redirect_uris": [f"https://app.example/{'a' * 2000}"]}, 400, "redirect_uris[0]"),
        ({"contacts": [f"a{n}@example.com" for n in range(20_000)]}, 413, "bytes"),
        ({"client_uri": "https://app.example/" + "b" * 3000}, 400, "client_uri"),
    ],
)
async def test_registration_metadata_is_bounded_and_nothing_is_stored(
    stranger: httpx.AsyncClient, store: Store, metadata: dict[str, Any], status: int, says: str
) -> None:
    response = await stranger.post("/v1/oauth/register", json=registration(**metadata))
    assert response.status_code == status, response.text[:300]
    assert response.json()["error"] == "invalid_client_metadata"
    assert says in response.json()["error_description"]
    assert await store.db["oauth_clients"].count_documents({}) == 0


@pytest.mark.parametrize(
    "uri",
    [
        "javascript:alert(document.domain)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "vbscript:msgbox(1)",
        "http://evil.example/callback",
        "ftp://files.example/cb",
        "about:blank",
        "myapp:/callback",  # a private-use scheme must be reverse-domain (RFC 8252 §7.1)
        "https://app.example/cb#fragment",
    ],
)
async def test_dangerous_redirect_uris_are_refused_at_registration(
    stranger: httpx.AsyncClient, store: Store, uri: str
) -> None:
    response = await stranger.post("/v1/oauth/register", json=registration(redirect_uris=[uri]))
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_redirect_uri"
    assert await store.db["oauth_clients"].count_documents({}) == 0


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example/callback",
        "http://localhost:8080/callback",
        "http://127.0.0.1/callback",
        "http://[::1]:33418/callback",
        "com.example.assistant:/oauth2redirect",
    ],
)
async def test_web_loopback_and_private_use_redirect_uris_are_accepted(
    stranger: httpx.AsyncClient, uri: str
) -> None:
    response = await stranger.post("/v1/oauth/register", json=registration(redirect_uris=[uri]))
    assert response.status_code == 201, response.text


async def test_registration_is_rate_limited_per_address(app: Starlette, store: Store) -> None:
    async with client_at(app, "198.51.100.20") as flooding:
        for _ in range(REGISTRATIONS_PER_ADDRESS):
            assert (await flooding.post("/v1/oauth/register", json=registration())).is_success
        refused = await flooding.post("/v1/oauth/register", json=registration())
    assert refused.status_code == 429
    retry = int(refused.headers["retry-after"])
    assert 3500 <= retry <= 3600  # until the first of the hour's registrations ages out
    # The same /64 is the same customer; another address is not held back.
    async with client_at(app, "2001:db8:1:2::1") as first:
        for _ in range(REGISTRATIONS_PER_ADDRESS):
            assert (await first.post("/v1/oauth/register", json=registration())).is_success
    async with client_at(app, "2001:db8:1:2::99") as same:
        assert (await same.post("/v1/oauth/register", json=registration())).status_code == 429
    async with client_at(app, "198.51.100.21") as other:
        assert (await other.post("/v1/oauth/register", json=registration())).status_code == 201
    # What is counted is indexed: the address and the time, and the unused-client TTL.
    indexes = await store.db["oauth_clients"].index_information()
    assert list(indexes["registered_from"]["key"]) == [("registeredFrom", 1), ("createdAt", 1)]
    assert list(indexes["unused_ttl"]["key"]) == [("unusedUntil", 1)]
    assert indexes["unused_ttl"]["expireAfterSeconds"] == 0


async def test_a_refused_address_is_answered_without_asking_the_store(
    app: Starlette, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    counted = store.oauth_clients.registered_since

    async def counting(*args: Any) -> Any:
        reads.append("read")
        return await counted(*args)

    monkeypatch.setattr(store.oauth_clients, "registered_since", counting)
    async with client_at(app, "198.51.100.30") as flooding:
        for _ in range(REGISTRATIONS_PER_ADDRESS):
            assert (await flooding.post("/v1/oauth/register", json=registration())).is_success
        answers = [
            await flooding.post("/v1/oauth/register", json=registration()) for _ in range(50)
        ]
    assert {a.status_code for a in answers} == {429}
    assert len(reads) == REGISTRATIONS_PER_ADDRESS + 1  # the first refusal read; 49 did not
    assert len({a.headers["retry-after"] for a in answers}) <= 2  # the same wait, counting down


async def test_a_client_never_used_expires_and_a_used_one_stays(
    http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    unused = await oc.register(http)
    record = await store.db["oauth_clients"].find_one({"_id": unused.client_id})
    assert record is not None
    left = record["unusedUntil"].replace(tzinfo=None) - utcnow().replace(tzinfo=None)
    assert UNUSED_CLIENT_TTL - timedelta(minutes=1) < left <= UNUSED_CLIENT_TTL
    # A day later (the TTL monitor may not have run yet): the client is gone for every purpose.
    await store.db["oauth_clients"].update_one(
        {"_id": unused.client_id}, {"$set": {"unusedUntil": utcnow() - timedelta(seconds=1)}}
    )
    gone, _ = await oc.start(http, unused.client_id, "read_documents")
    assert gone.status_code == 400 and "not registered" in gone.text
    # A client a person consented to keeps no expiry.
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    used = await store.db["oauth_clients"].find_one({"_id": tokens["client_id"]})
    assert used is not None and "unusedUntil" not in used


# -- the authorization request --------------------------------------------------------------


def authorize_params(registered: str, **changes: str | None) -> dict[str, str]:
    params: dict[str, str | None] = {
        "response_type": "code",
        "client_id": registered,
        "redirect_uri": oc.REDIRECT_URI,
        "code_challenge": "x" * 43,
        "code_challenge_method": "S256",
        "state": "st-9",
        "scope": "read_documents",
        **changes,
    }
    return {key: value for key, value in params.items() if value is not None}


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"scope": "read_documents fly_rockets"}, "invalid_scope"),
        ({"scope": "write_rules"}, "invalid_scope"),  # outside the client's registered scope
        ({"redirect_uri": oc.REDIRECT_URI + "/elsewhere"}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": None}, "invalid_request"),
        ({"response_type": "token"}, "invalid_request"),
        ({"client_id": "no-such-client"}, "invalid_request"),
        ({"resource": "https://attacker.example/mcp"}, "invalid_target"),
    ],
)
async def test_an_invalid_authorization_request_shows_a_page_and_never_redirects(
    http: httpx.AsyncClient, changes: dict[str, str | None], error: str
) -> None:
    client = await oc.register(http, scope="read_documents")
    params = authorize_params(client.client_id, **changes)
    response = await http.get("/v1/oauth/authorize", params=params)
    assert response.status_code == 400, response.headers.get("location")
    assert "location" not in response.headers
    assert response.headers["content-type"].startswith("text/html")
    assert error in response.text and "cannot be used" in response.text
    assert response.headers["x-frame-options"] == "DENY"


async def test_a_parameter_sent_twice_is_refused(http: httpx.AsyncClient) -> None:
    client = await oc.register(http)
    query = "&".join(f"{k}={v}" for k, v in authorize_params(client.client_id).items())
    response = await http.get(f"/v1/oauth/authorize?{query}&state=other")
    assert response.status_code == 400 and "location" not in response.headers
    assert "state sent twice" in response.text


@pytest.mark.parametrize(
    ("redirect_uri", "shown"),
    [
        ("https://assistant.example:8443/oauth/callback", "assistant.example:8443"),
        ("https://assistant.example/oauth/callback", "assistant.example"),
        (
            "com.example.assistant:/oauth2redirect",
            "the app that opens com.example.assistant: links",
        ),
    ],
)
async def test_the_consent_page_names_where_the_browser_goes(
    http: httpx.AsyncClient, person: Tenant, redirect_uri: str, shown: str
) -> None:
    client = await oc.register(http, redirect_uris=[redirect_uri])
    started = await http.get(
        "/v1/oauth/authorize",
        params=authorize_params(client.client_id, redirect_uri=redirect_uri),
    )
    page = await oc.sign_in_page(http, started)
    consent = await oc.submit_sign_in(http, page, "alice@example.com", PASSWORD)
    assert consent.status_code == 200
    assert f'<strong class="destination">{shown}</strong>' in consent.text


# -- the resource a token is for (RFC 8707) -------------------------------------------------


async def test_a_token_for_mcp_is_refused_by_the_rest_api(
    http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    tokens = await oc.whole_flow(
        http, "alice@example.com", PASSWORD, person.org_id, resource=f"{BASE}/mcp"
    )
    access = tokens["access_token"]
    stored = await store.db["oauth_tokens"].find_one({"kind": "access"})
    assert stored is not None and stored["resource"] == f"{BASE}/mcp"
    listed = await rpc(http, "tools/call", CONTEXT_CALL, access)
    assert listed.status_code == 200 and '"isError":true' not in listed.text
    rest = await http.post(
        "/v1/capabilities/documents.search",
        json={"limit": 1},
        headers={"Authorization": f"Bearer {access}"},
    )
    assert rest.status_code == 401
    assert "issued for https://fincap.test/mcp" in rest.json()["error"]["errorMessage"]


async def test_a_token_for_the_whole_service_works_on_every_face(
    http: httpx.AsyncClient, store: Store, person: Tenant
) -> None:
    tokens = await oc.whole_flow(http, "alice@example.com", PASSWORD, person.org_id)
    access = tokens["access_token"]
    stored = await store.db["oauth_tokens"].find_one({"kind": "access"})
    assert stored is not None and stored["resource"] == BASE
    rest = await http.post(
        "/v1/capabilities/documents.search",
        json={"limit": 1},
        headers={"Authorization": f"Bearer {access}"},
    )
    assert rest.status_code == 200, rest.text
    called = await rpc(http, "tools/call", CONTEXT_CALL, access)
    assert called.status_code == 200


async def test_a_token_for_the_rest_api_is_refused_by_mcp(
    http: httpx.AsyncClient, person: Tenant
) -> None:
    tokens = await oc.whole_flow(
        http, "alice@example.com", PASSWORD, person.org_id, resource=f"{BASE}/v1"
    )
    refused = await rpc(http, "tools/call", CONTEXT_CALL, tokens["access_token"])
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]


async def test_the_token_request_must_name_the_grants_resource(
    http: httpx.AsyncClient, person: Tenant
) -> None:
    client = await oc.register(http)
    started, verifier = await oc.start(
        http, client.client_id, "read_documents", resource=f"{BASE}/mcp"
    )
    page = await oc.sign_in_page(http, started)
    consent = await oc.submit_sign_in(http, page, "alice@example.com", PASSWORD)
    code = (await oc.consent(http, consent.text, person.org_id))["code"][0]
    wrong = await oc.exchange(http, client.client_id, code, verifier, resource=f"{BASE}/v1")
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_target"
    right = await oc.exchange(http, client.client_id, code, verifier, resource=f"{BASE}/mcp/")
    assert right.status_code == 200, right.text


# -- sign-in ----------------------------------------------------------------------------------


_registered: weakref.WeakKeyDictionary[httpx.AsyncClient, str] = weakref.WeakKeyDictionary()


async def sign_in_as(http: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    """The sign-in page of a new authorization request, submitted (one client per ``http``)."""
    if http not in _registered:
        _registered[http] = (await oc.register(http)).client_id
    started, _ = await oc.start(http, _registered[http], "read_documents")
    page = await oc.sign_in_page(http, started)
    return await oc.submit_sign_in(http, page, email, password)


@pytest.fixture
def throttle_clock(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    """The sign-in throttle's now, moved by the test: a wait of a second is not over because a
    loaded machine took a second between two requests."""
    clock = ManualClock()
    monkeypatch.setattr(sign_in_failures, "utcnow", clock)
    monkeypatch.setattr(sign_in_throttle, "utcnow", clock)
    return clock


async def test_guessing_a_password_slows_down_and_says_when_to_try_again(
    app: Starlette, store: Store, person: Tenant, throttle_clock: ManualClock
) -> None:
    async with client_at(app, "192.0.2.50") as guesser:
        for _ in range(ACCOUNT_FREE_FAILURES):
            wrong = await sign_in_as(guesser, "alice@example.com", "not the password")
            assert wrong.status_code == 401
        held = await sign_in_as(guesser, "alice@example.com", PASSWORD)  # even the right one
    assert held.status_code == 429
    assert held.headers["retry-after"] == "1"
    assert "Too many failed sign-ins. Try again in" in held.text
    # From another address the account waits too (the guesser may change address)...
    async with client_at(app, "192.0.2.51") as owner:
        assert (await sign_in_as(owner, "alice@example.com", PASSWORD)).status_code == 429
        # ...until its wait is over; then the right password works and ends the run.
        throttle_clock.advance(1)
        assert (await sign_in_as(owner, "alice@example.com", PASSWORD)).status_code == 200
        assert (await sign_in_as(owner, "alice@example.com", "wrong again")).status_code == 401


async def test_each_further_failure_doubles_the_wait(
    app: Starlette, store: Store, throttle_clock: ManualClock
) -> None:
    """For an account that does not exist, exactly as for one that does."""
    waits: list[int | None] = []
    async with client_at(app, "192.0.2.60") as guesser:
        for _ in range(ACCOUNT_FREE_FAILURES + 3):
            assert (await sign_in_as(guesser, "nobody@example.com", "guess")).status_code == 401
            record = await store.db["sign_in_failures"].find_one({"_id": {"$regex": "^account:"}})
            assert record is not None
            until = record.get("lockedUntil")
            seconds = (until - throttle_clock()).total_seconds() if until else 0
            waits.append(round(seconds) if seconds > 0 else None)
            throttle_clock.advance(seconds)  # the next guess made once the wait is over
    assert waits == [None] * (ACCOUNT_FREE_FAILURES - 1) + [1, 2, 4, 8]


async def test_one_address_guessing_many_accounts_is_held_back(
    app: Starlette, person: Tenant
) -> None:
    async with client_at(app, "192.0.2.70") as sprayer:
        for n in range(ADDRESS_FREE_FAILURES):
            wrong = await sign_in_as(sprayer, f"user{n}@example.com", "Summer2026!")
            assert wrong.status_code == 401
        held = await sign_in_as(sprayer, "alice@example.com", PASSWORD)
        assert held.status_code == 429
    async with client_at(app, "192.0.2.71") as elsewhere:
        assert (await sign_in_as(elsewhere, "alice@example.com", PASSWORD)).status_code == 200


async def test_password_hashes_are_checked_off_the_event_loop(
    http: httpx.AsyncClient, person: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real = oauth.password_matches

    def recording(password_hash: str | None, password: str) -> bool:
        threads.append(threading.current_thread().name)
        return real(password_hash, password)

    monkeypatch.setattr(oauth, "password_matches", recording)
    assert (await sign_in_as(http, "alice@example.com", PASSWORD)).status_code == 200
    assert (await sign_in_as(http, "nobody@example.com", PASSWORD)).status_code == 401
    assert len(threads) == 2 and all(name.startswith("argon2") for name in threads)


@pytest.mark.wire
async def test_registration_limits_hold_on_the_embedded_store(
    wire_store: Store, registry: Registry
) -> None:
    """The same counting, expiry and bounds over the real protocol (SecantusDB): the index
    range count of one address, the TTL index, the unused client treated as gone."""
    app = app_on(wire_store, registry, Settings(public_url=BASE))
    async with client_at(app, "198.51.100.40") as flooding:
        for _ in range(REGISTRATIONS_PER_ADDRESS):
            assert (await flooding.post("/v1/oauth/register", json=registration())).is_success
        refused = await flooding.post("/v1/oauth/register", json=registration())
        assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 3500
        too_big = await flooding.post(
            "/v1/oauth/register", json=registration(client_name="x" * 100_000)
        )
    assert too_big.status_code in (413, 429)
    indexes = await wire_store.db["oauth_clients"].index_information()
    assert indexes["unused_ttl"]["expireAfterSeconds"] == 0
    assert await wire_store.oauth_clients.unused_count(1000) == REGISTRATIONS_PER_ADDRESS
    some = await wire_store.db["oauth_clients"].find_one({})
    assert some is not None
    await wire_store.db["oauth_clients"].update_one(
        {"_id": some["_id"]}, {"$set": {"unusedUntil": utcnow() - timedelta(seconds=1)}}
    )
    assert await wire_store.oauth_clients.get(some["_id"]) is None
    assert await wire_store.oauth_clients.unused_count(1000) == REGISTRATIONS_PER_ADDRESS - 1
