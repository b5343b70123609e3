"""`fincap admin bootstrap` as the first step of a person at a terminal: it asks for the
dashboard's password (twice, Enter skips) and says where to sign in; a script gets the same JSON
and is asked nothing; both get a one-time sign-in link (issue 38, item 6)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from mongomock_motor import AsyncMongoMockClient

from app.cli import root
from persistence.store import Store
from resolvers.services.auth import oauth

EMAIL = "owner@example.com"
ARGS = ["admin", "bootstrap", "--email", EMAIL, "--workspace", "Home"]


@pytest.fixture
def signs_in(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], bool]]:
    """Bootstrap runs on an in-memory store; the returned check signs in on that store."""
    store = Store(AsyncMongoMockClient(tz_aware=True)[f"boot_{uuid.uuid4().hex[:8]}"])
    loop = asyncio.new_event_loop()

    def run_on_store(action: Callable[[Store], Awaitable[dict[str, Any]]]) -> None:
        print(json.dumps(loop.run_until_complete(action(store))))

    monkeypatch.setattr(root, "run_on_store", run_on_store)

    def check(password: str) -> bool:
        found = loop.run_until_complete(oauth.sign_in(store, EMAIL, password, "127.0.0.1"))
        return found is not None

    loop.run_until_complete(store.ensure_indexes())
    yield check
    loop.close()


def invoke(monkeypatch: pytest.MonkeyPatch, terminal: bool, typed: str) -> Any:
    monkeypatch.setattr(root, "on_a_terminal", lambda: terminal)
    return CliRunner().invoke(root.main, ARGS, input=typed)


def test_at_a_terminal_it_asks_for_the_dashboard_password(
    monkeypatch: pytest.MonkeyPatch, signs_in: Callable[[str], bool]
) -> None:
    # Too short, then two that differ, then the same twice.
    typed = "short\nlong enough 1\nlong enough 2\nlong enough 1\nlong enough 1\n"
    result = invoke(monkeypatch, True, typed)
    assert result.exit_code == 0, result.output
    assert "use at least 10 characters" in result.stderr
    assert "did not match" in result.stderr
    assert f"Later, sign in at /app/ on the server as {EMAIL}" in result.stderr
    assert "Open signInUrl in a browser" in result.stderr
    created = json.loads(result.stdout)
    assert created["passwordSet"] is True and created["apiKey"].startswith("sk_")
    assert signs_in("long enough 1") and not signs_in("long enough 2")


def test_enter_skips_and_says_how_to_set_one_later(
    monkeypatch: pytest.MonkeyPatch, signs_in: Callable[[str], bool]
) -> None:
    result = invoke(monkeypatch, True, "\n")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["passwordSet"] is False
    assert f"fincap admin set-password --email {EMAIL}" in result.stderr


def test_a_script_is_asked_nothing(
    monkeypatch: pytest.MonkeyPatch, signs_in: Callable[[str], bool]
) -> None:
    result = invoke(monkeypatch, False, "would be a password\n")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # nothing asked, nothing said: the JSON alone, as before
    assert set(json.loads(result.output)) == {"userId", "orgId", "apiKey", "signInUrl"}
    assert not signs_in("would be a password")


def test_it_prints_a_one_time_sign_in_link(
    monkeypatch: pytest.MonkeyPatch, signs_in: Callable[[str], bool]
) -> None:
    """The link names the server's public address and carries a secret only the link has
    (the store keeps its digest, bound to the new workspace); ``sign-in-link`` makes another."""
    monkeypatch.setenv("FINCAP_PUBLIC_URL", "https://books.example")
    result = invoke(monkeypatch, False, "")
    created = json.loads(result.output)
    prefix = "https://books.example/app/#/sign-in-link/sil_"
    assert created["signInUrl"].startswith(prefix), created
    again = CliRunner().invoke(root.main, ["admin", "sign-in-link", "--email", EMAIL])
    assert again.exit_code == 0, again.output
    other = json.loads(again.output)
    assert other["signInUrl"].startswith(prefix) and other["signInUrl"] != created["signInUrl"]
    assert other["orgId"] == created["orgId"] and other["expiresAt"]
