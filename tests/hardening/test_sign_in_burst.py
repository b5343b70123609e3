"""Attack H2 (issue 35): the sign-in throttle raced and overflowed.

The lock was checked before the password hash and failures counted after it, so 100 wrong
passwords sent at once were all hashed (51 × 401, 49 × 500, no 429); from the 52nd failure in
a run ``wait_after()`` raised ``OverflowError`` and every guess after was hashed and answered
500; a legitimate sign-in took 21.6 s, queued behind the guesses in the one hashing thread; and
``X-Forwarded-For`` was believed from any loopback peer. Hash counts, not clocks, show it.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest
from starlette.requests import Request

from app.cli.root import server_config
from app.host.config import Settings
from app.host.main import create_app
from app.http.request_context import client_address
from persistence.ids import utcnow
from persistence.store import Store
from resolvers.services.auth import oauth
from resolvers.services.auth.client_addresses import address_key
from resolvers.services.auth.oauth import set_password, sign_in
from resolvers.services.auth.sign_in_throttle import (
    ACCOUNT_FREE_FAILURES,
    MAX_WAIT,
    SignInThrottled,
    account_key,
    wait_after,
)
from tests.conftest import Tenant

PASSWORD = "correct horse battery"


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The passwords hashed, in the order the hashing thread took them."""
    order: list[str] = []
    lock = threading.Lock()
    real = oauth.password_matches

    def recording(password_hash: str | None, password: str) -> bool:
        with lock:
            order.append(password)
        return real(password_hash, password)

    monkeypatch.setattr(oauth, "password_matches", recording)
    return order


async def test_a_burst_of_wrong_passwords_is_counted_before_any_hash(
    store: Store, alice: Tenant, hashed: list[str]
) -> None:
    await set_password(store, "alice@example.com", PASSWORD)
    outcomes = await asyncio.gather(
        *(sign_in(store, "alice@example.com", f"guess {n}", "198.51.100.7") for n in range(100)),
        return_exceptions=True,
    )
    unexpected = [o for o in outcomes if isinstance(o, BaseException)]
    assert all(isinstance(o, SignInThrottled) for o in unexpected), unexpected
    assert len(hashed) <= ACCOUNT_FREE_FAILURES
    assert sum(o is None for o in outcomes) == len(hashed)  # every guess hashed said 401
    assert len(unexpected) == 100 - len(hashed)  # and every other one 429


def test_the_backoff_is_bounded() -> None:
    assert wait_after(52, ACCOUNT_FREE_FAILURES) == MAX_WAIT
    assert wait_after(10**6, ACCOUNT_FREE_FAILURES) == MAX_WAIT


async def test_a_long_run_of_failures_still_answers_401_then_429(
    store: Store, alice: Tenant, hashed: list[str]
) -> None:
    """From the 52nd failure every guess was hashed and answered 500."""
    await set_password(store, "alice@example.com", PASSWORD)
    key = account_key("alice@example.com")
    await store.db["sign_in_failures"].insert_one(
        {
            "_id": key,
            "failures": 80,
            "lastFailureAt": utcnow(),
            "expiresAt": utcnow() + timedelta(days=1),
            "lockedUntil": utcnow() - timedelta(seconds=1),
        }
    )
    assert await sign_in(store, "alice@example.com", "guess", "198.51.100.8") is None
    with pytest.raises(SignInThrottled) as held:
        await sign_in(store, "alice@example.com", PASSWORD, "198.51.100.8")
    assert held.value.retry_after > MAX_WAIT.total_seconds() - 5
    assert hashed == ["guess"]


async def test_an_attackers_burst_does_not_queue_ahead_of_another_persons_sign_in(
    store: Store, alice: Tenant, bob: Tenant, hashed: list[str]
) -> None:
    await set_password(store, "alice@example.com", PASSWORD)
    await set_password(store, "bob@example.com", PASSWORD)
    guesses = [sign_in(store, "alice@example.com", f"guess {n}", "198.51.100.9") for n in range(50)]
    owner = sign_in(store, "bob@example.com", PASSWORD, "203.0.113.20")
    outcomes = await asyncio.gather(*guesses, owner, return_exceptions=True)
    assert isinstance(outcomes[-1], dict) and outcomes[-1]["_id"] == bob.user_id
    # The attacker's address holds one place in the hashing queue at a time.
    assert hashed.index(PASSWORD) <= 1


def request_from(peer: str, forwarded: str, trusted: str = "") -> Request:
    app = create_app(Settings(trusted_proxies=trusted), services=None)
    scope = {
        "type": "http",
        "app": app,
        "client": (peer, 40000),
        "headers": [(b"x-forwarded-for", forwarded.encode())],
    }
    return Request(scope)


def test_forwarded_for_is_believed_only_from_configured_proxies() -> None:
    spoofed = request_from("127.0.0.1", "192.0.2.99")
    assert client_address(spoofed) == address_key("127.0.0.1")
    behind_proxy = request_from("10.0.0.5", "192.0.2.99, 10.0.0.9", trusted="10.0.0.0/24")
    # The right-most address the proxies did not add themselves: the client they saw.
    assert client_address(behind_proxy) == address_key("192.0.2.99")
    not_ours = request_from("10.0.1.5", "192.0.2.99", trusted="10.0.0.0/24")
    assert client_address(not_ours) == address_key("10.0.1.5")


def test_the_server_does_not_rewrite_the_peer_from_forwarded_headers() -> None:
    """uvicorn believed X-Forwarded-For from any loopback peer (its default)."""
    config = server_config(create_app(Settings()), Settings())
    assert config.proxy_headers is False
