"""``GET /v1/events`` through ASGI: authorized like a documents query, tenant-scoped, resumable
with ``Last-Event-ID``, capped per key, with heartbeats; the client leaving frees its place."""

from __future__ import annotations

import json

import pytest
from starlette.applications import Starlette

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from resolvers.services.events.hub import EventLimits
from tests.conftest import Tenant, app_on, second_workspace
from tests.documents.conftest import doc
from tests.events.streams import asgi_get
from tests.test_route_scopes import key_with

EVENTS = "/v1/events"


@pytest.fixture
def app(store: Store, registry: object) -> Starlette:
    settings = Settings(events_per_key=2, events_poll_seconds=0.05)
    return app_on(store, settings=settings)


def hub_of(app: Starlette):  # type: ignore[no-untyped-def]
    return app.state.services.events


async def test_events_stream_as_sse_with_ids_and_the_document(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    async with asgi_get(app, EVENTS, alice.headers()) as stream:
        assert stream.status == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        assert stream.headers["cache-control"] == "no-store"
        await store.documents.writes.insert_many(
            alice.org_id, [doc("doc_1", processingStatus="queued")]
        )
        await store.documents.writes.set_processing(alice.org_id, "doc_1", "processed", "done")
        created, processed = await stream.message(), await stream.message()
    assert stream.reader.retry == 2000
    assert (created.event, created.data["documentId"]) == ("document.created", "doc_1")
    assert processed.event == "document.processed"
    assert processed.id == processed.data["id"]
    document = processed.data["document"]
    assert (document["processingStatus"], document["amount"], document["merchant"]) == (
        "processed",
        10.0,
        "Shell",
    )
    assert "workspaceId" not in document and "editHistory" not in document


async def test_another_workspace_sees_nothing(
    app: Starlette, store: Store, alice: Tenant, bob: Tenant
) -> None:
    async with (
        asgi_get(app, EVENTS, alice.headers()) as alices,
        asgi_get(app, EVENTS, bob.headers()) as bobs,
    ):
        await store.documents.writes.insert_many(alice.org_id, [doc("doc_alice")])
        await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob")])
        assert (await alices.message()).data["documentId"] == "doc_alice"
        assert (await bobs.message()).data["documentId"] == "doc_bob"
        # A later write in each workspace is the next message of each: the other's event came
        # before it, if at all, and did not come.
        await store.documents.writes.insert_many(alice.org_id, [doc("doc_alice_later")])
        await store.documents.writes.insert_many(bob.org_id, [doc("doc_bob_later")])
        assert [m.data["documentId"] for m in await alices.until("doc_alice_later")] == [
            "doc_alice_later"
        ]
        assert [m.data["documentId"] for m in await bobs.until("doc_bob_later")] == [
            "doc_bob_later"
        ]
    # Bob naming Alice's workspace is refused, as for any query.
    async with asgi_get(app, EVENTS, bob.headers(org=alice.org_id)) as refused:
        assert refused.status == 403
        assert json.loads(await refused.body())["error"]["reason"] == "not_a_member"


async def test_credentials_and_scope_are_checked_like_a_query(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    async with asgi_get(app, EVENTS, {}) as anonymous:
        assert anonymous.status == 401
    await second_workspace(store, alice)  # with one, a stream naming none would open there
    async with asgi_get(app, EVENTS, alice.headers(org=None)) as no_workspace:
        assert no_workspace.status == 400
    writer_only = await key_with(store, alice, "write_documents", "read_workspaces")
    async with asgi_get(app, EVENTS, writer_only) as no_scope:
        assert no_scope.status == 403
        assert json.loads(await no_scope.body())["error"]["reason"] == "missing_scope"
    reader = await key_with(store, alice, "read_documents")
    async with asgi_get(app, EVENTS, reader) as allowed:
        assert allowed.status == 200
    # The key may also come as ?apiKey= (EventSource cannot send headers).
    query = f"apiKey={alice.api_key}"
    async with asgi_get(app, EVENTS, {"X-Service-Org-Id": alice.org_id}, query) as by_query:
        assert by_query.status == 200


async def test_a_key_is_refused_past_its_open_streams_and_a_closed_one_frees_its_place(
    app: Starlette, alice: Tenant
) -> None:
    async with (
        asgi_get(app, EVENTS, alice.headers()),
        asgi_get(app, EVENTS, alice.headers()),
        asgi_get(app, EVENTS, alice.headers()) as third,
    ):
        assert third.status == 429
        assert third.headers["retry-after"].isdigit()
        assert json.loads(await third.body())["error"]["reason"] == "too_many_requests"
    assert hub_of(app).subscribers() == 0  # the clients left: their subscriptions ended
    async with asgi_get(app, EVENTS, alice.headers()) as again:
        assert again.status == 200


async def test_last_event_id_resumes_where_the_client_left(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    async with asgi_get(app, EVENTS, alice.headers()) as stream:
        await store.documents.writes.insert_many(alice.org_id, [doc("doc_1")])
        last = await stream.message()
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_2"), doc("doc_3")])
    resumed_headers = {**alice.headers(), "Last-Event-ID": last.id or ""}
    async with asgi_get(app, EVENTS, resumed_headers) as resumed:
        missed = [await resumed.message(), await resumed.message()]
    assert [m.data["documentId"] for m in missed] == ["doc_2", "doc_3"]


async def test_a_quiet_stream_sends_heartbeats(store: Store, alice: Tenant) -> None:
    app = app_on(store)
    hub = hub_of(app)
    hub.limits = EventLimits(heartbeat=0.1)
    async with asgi_get(app, EVENTS, alice.headers()) as stream:
        await stream.until_heartbeats(2)
        assert not stream.reader.pending  # heartbeats only: a quiet stream


async def test_a_revoked_key_stops_receiving_at_the_next_heartbeat(
    store: Store, alice: Tenant
) -> None:
    app = app_on(store)
    hub_of(app).limits = EventLimits(heartbeat=0.1)
    secret = new_api_key_secret()
    key = await store.api_keys.create(alice.user_id, secret, restricted_to=alice.org_id)
    headers = {"Authorization": f"Bearer {secret}", "X-Service-Org-Id": alice.org_id}
    async with asgi_get(app, EVENTS, headers) as stream:
        assert stream.status == 200
        assert hub_of(app).subscribers() == 1
        await store.api_keys.revoke(alice.user_id, key["_id"])
        # The stream ended by itself, its one message the failure: no event after it.
        ended = await stream.until_end()
        assert [(m.event, m.data["error"]["reason"]) for m in ended] == [
            ("error", "unauthenticated")
        ]
        assert hub_of(app).subscribers() == 0


async def test_resuming_with_another_workspaces_event_id_reveals_nothing(
    app: Starlette, store: Store, alice: Tenant, bob: Tenant
) -> None:
    async with asgi_get(app, EVENTS, alice.headers()) as alices:
        await store.documents.writes.insert_many(alice.org_id, [doc("doc_a1")])
        alice_event = await alices.message()
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_a2")])
    await store.documents.writes.insert_many(bob.org_id, [doc("doc_b1")])
    # Bob presents Alice's event id: the read is scoped to his workspace.
    headers = {**bob.headers(), "Last-Event-ID": alice_event.id or ""}
    async with asgi_get(app, EVENTS, headers) as bobs:
        # What the resumption read from the store comes first; a write made now comes after it.
        await store.documents.writes.insert_many(bob.org_id, [doc("doc_b2")])
        seen = await bobs.until("doc_b2")
    assert [m.data["documentId"] for m in seen] == ["doc_b1", "doc_b2"]


async def test_a_malformed_resume_id_starts_from_now(
    app: Starlette, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_old")])
    headers = {**alice.headers(), "Last-Event-ID": "not-an-id"}
    async with asgi_get(app, EVENTS, headers, "after=%24where") as stream:
        assert stream.status == 200
        await store.documents.writes.insert_many(alice.org_id, [doc("doc_new")])
        assert (await stream.message()).data["documentId"] == "doc_new"


async def test_a_store_lost_while_a_stream_opens_is_a_503_not_an_internal_error(
    app: Starlette, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stream's opening reads the events it already knows; a store lost right then (seen in
    CI: the store killed while a subscription was opening) is the outage's 503 with
    Retry-After, as every other read answers it, and leaves no stream counted."""
    from pymongo.errors import AutoReconnect

    hub = hub_of(app)

    async def lost(*args: object, **kwargs: object) -> object:
        raise AutoReconnect("127.0.0.1:1: [Errno 104] Connection reset by peer")

    monkeypatch.setattr(hub._log, "recent", lost)
    async with asgi_get(app, EVENTS, alice.headers()) as refused:
        assert refused.status == 503
        assert int(refused.headers["retry-after"]) > 0
        body = json.loads(await refused.body())
        assert body["error"]["reason"] == "service_unavailable"
        assert "Connection reset" not in json.dumps(body)  # no driver text
    assert hub.subscribers() == 0
