"""Attack H1 (issue 35): live events outlived the right to them.

The probe kept receiving every event, each with the full document, for 57 s after a member's
removal and 36 s after a key's revocation: streams re-checked their credentials only after 15 s
*without* events, which never comes in a busy workspace. Here every stream is busy (a document
written every 20 ms, so the heartbeat never fires) and the access changes, in this process or
in another one (a second ``Store`` over the same database has none of this app's listeners:
what it changes reaches the app only through the store). The stream's end is the event each
test waits for, with a hang guard; nothing is proved by sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from starlette.applications import Starlette

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from tests.conftest import Tenant, app_on, member_of
from tests.documents.conftest import doc
from tests.events.streams import AsgiStream, asgi_get

EVENTS = "/v1/events"
_ids = itertools.count()


@pytest.fixture
def app(store: Store) -> Starlette:
    return app_on(store, settings=Settings(events_poll_seconds=0.05))


@contextlib.asynccontextmanager
async def busy(store: Store, org_id: str) -> AsyncIterator[list[str]]:
    """A document written every 20 ms in ``org_id`` while the block runs; the ids written."""
    written: list[str] = []

    async def write() -> None:
        while True:
            document_id = f"doc_busy_{next(_ids)}"
            await store.documents.writes.insert_many(org_id, [doc(document_id)])
            written.append(document_id)
            await asyncio.sleep(0.02)

    task = asyncio.create_task(write())
    try:
        yield written
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def key_of(store: Store, tenant: Tenant) -> tuple[str, dict[str, str]]:
    secret = new_api_key_secret()
    key = await store.api_keys.create(tenant.user_id, secret, restricted_to=tenant.org_id)
    return key["_id"], {"Authorization": f"Bearer {secret}", "X-Service-Org-Id": tenant.org_id}


async def receiving(stream: AsgiStream) -> None:
    assert stream.status == 200
    await stream.message()  # the busy writer's events arrive


def other_process(store: Store) -> Store:
    """The same database seen by another process: none of this app's listeners hear it."""
    return Store(store.db)


async def test_a_busy_stream_ends_when_its_key_is_revoked_here(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    key_id, headers = await key_of(store, alice)
    async with asgi_get(app, EVENTS, headers) as stream, busy(store, alice.org_id) as written:
        await receiving(stream)
        await store.api_keys.revoke(alice.user_id, key_id)
        after_revocation = len(written)
        delivered = await stream.until_end()
    # Revoked in this process: nothing written after the revocation reached the stream.
    late = {m.data.get("documentId") for m in delivered} & set(written[after_revocation + 1 :])
    assert not late
    assert delivered[-1].event == "error"
    assert delivered[-1].data["error"]["reason"] == "unauthenticated"
    assert app.state.services.events.subscribers() == 0


async def test_a_busy_stream_ends_when_another_process_revokes_its_key(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    key_id, headers = await key_of(store, alice)
    async with asgi_get(app, EVENTS, headers) as stream, busy(store, alice.org_id):
        await receiving(stream)
        await other_process(store).api_keys.revoke(alice.user_id, key_id)
        delivered = await stream.until_end()
    assert delivered[-1].event == "error"


async def test_a_busy_stream_ends_when_its_member_is_removed_elsewhere(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    carol = await member_of(store, alice, "carol@example.com")
    async with asgi_get(app, EVENTS, carol.headers()) as stream, busy(store, alice.org_id):
        await receiving(stream)
        assert await other_process(store).workspaces.remove_member(
            alice.org_id, carol.user_id, may_touch_owner=True
        )
        delivered = await stream.until_end()
    assert delivered[-1].data["error"]["reason"] == "not_a_member"


async def test_a_busy_stream_ends_when_its_members_role_is_lowered(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    carol = await member_of(store, alice, "carol@example.com", role="admin")
    async with asgi_get(app, EVENTS, carol.headers()) as stream, busy(store, alice.org_id):
        await receiving(stream)
        await other_process(store).workspaces.change_role(
            alice.org_id, carol.user_id, "member", may_touch_owner=True
        )
        delivered = await stream.until_end()
    # Still a member who may read: the stream ends so that it is opened again with the new
    # role (the client resumes with Last-Event-ID and misses nothing).
    assert delivered[-1].data["error"]["reason"] == "access_changed"


def grant_of(tenant: Tenant, family: str, scopes: list[str]) -> dict[str, object]:
    return {
        "familyId": family,
        "clientId": "client_1",
        "userId": tenant.user_id,
        "workspaceId": tenant.org_id,
        "scopes": scopes,
    }


async def test_a_busy_stream_ends_when_its_oauth_grant_is_revoked_or_narrowed(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    expires = datetime.now(UTC) + timedelta(hours=1)
    scopes = ["read_documents", "write_documents"]
    await store.oauth_tokens.create(
        "fat_alice_1", "access", grant_of(alice, "fam_1", scopes), expires
    )
    token = {"Authorization": "Bearer fat_alice_1"}
    async with asgi_get(app, EVENTS, token) as stream, busy(store, alice.org_id):
        await receiving(stream)
        await other_process(store).oauth_tokens.revoke_family("fam_1")
        revoked = await stream.until_end()
    assert revoked[-1].data["error"]["reason"] == "unauthenticated"

    # A refresh that narrows the grant (a new access token of the family with fewer scopes)
    # ends the streams opened under the wider one.
    await store.oauth_tokens.create(
        "fat_alice_2", "access", grant_of(alice, "fam_2", scopes), expires
    )
    token = {"Authorization": "Bearer fat_alice_2"}
    async with asgi_get(app, EVENTS, token) as stream, busy(store, alice.org_id):
        await receiving(stream)
        narrowed = grant_of(alice, "fam_2", ["write_documents"])
        await other_process(store).oauth_tokens.create("fat_alice_3", "access", narrowed, expires)
        ended = await stream.until_end()
    assert ended[-1].data["error"]["reason"] == "missing_scope"


async def test_an_unrelated_change_leaves_the_stream_alone(
    app: Starlette, store: Store, alice: Tenant, bob: Tenant
) -> None:
    """Another key's revocation and another member's change are no reason to end a stream:
    a sentinel event written after them still arrives."""
    other_key, _ = await key_of(store, alice)
    carol = await member_of(store, alice, "carol@example.com")
    async with asgi_get(app, EVENTS, alice.headers()) as stream:
        await other_process(store).api_keys.revoke(alice.user_id, other_key)
        await other_process(store).workspaces.remove_member(
            alice.org_id, carol.user_id, may_touch_owner=True
        )
        await store.api_keys.revoke(alice.user_id, other_key)
        # Long enough for the poller to have read both changes: several of its ticks.
        hub = app.state.services.events
        await hub.access_read.wait_for(2)
        await store.documents.writes.insert_many(alice.org_id, [doc("doc_sentinel")])
        assert (await stream.message()).data["documentId"] == "doc_sentinel"
    assert bob  # another tenant exists; untouched


async def test_after_zero_is_not_a_500_and_leaks_no_place(store: Store, alice: Tenant) -> None:
    """``after=000…0`` answered 500 and kept the stream's place under the key's cap."""
    app = app_on(store, settings=Settings(events_per_key=1, events_poll_seconds=0.05))
    zero = "0" * 24
    for _ in range(2):
        async with asgi_get(app, EVENTS, alice.headers(), f"after={zero}") as stream:
            assert stream.status == 200
            await store.documents.writes.insert_many(alice.org_id, [doc(f"doc_{next(_ids)}")])
            await stream.message()
    headers = {**alice.headers(), "Last-Event-ID": "f" * 24}  # from the far future
    async with asgi_get(app, EVENTS, headers) as stream:
        assert stream.status == 200
    assert app.state.services.events.subscribers() == 0


async def test_streams_are_capped_per_member_and_per_workspace(store: Store, alice: Tenant) -> None:
    """M5: streams were capped per key only; 100 keys held 1,000 streams. A member's keys
    share the member's cap, and the workspace's members share the workspace's."""
    settings = Settings(events_per_key=2, events_per_member=3, events_per_workspace=4)
    app = app_on(store, settings=settings)
    keys = [(await key_of(store, alice))[1] for _ in range(3)]
    carol = await member_of(store, alice, "carol@example.com")
    async with contextlib.AsyncExitStack() as streams:
        opened = [await streams.enter_async_context(asgi_get(app, EVENTS, h)) for h in keys]
        assert [s.status for s in opened] == [200, 200, 200]
        fourth = await streams.enter_async_context(asgi_get(app, EVENTS, alice.headers()))
        assert fourth.status == 429 and "member" in await fourth.body()
        carols = await streams.enter_async_context(asgi_get(app, EVENTS, carol.headers()))
        assert carols.status == 200
        fifth = await streams.enter_async_context(asgi_get(app, EVENTS, carol.headers()))
        assert fifth.status == 429 and "workspace" in await fifth.body()
    assert app.state.services.events.subscribers() == 0
