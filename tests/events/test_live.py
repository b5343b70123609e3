"""Live events over a real socket (uvicorn in a thread, in-memory store): SSE read by httpx,
the GraphQL subscription over graphql-transport-ws read by ``websockets``; and a server with
open streams stops at once."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from mongomock_motor import AsyncMongoMockClient
from starlette.types import ASGIApp
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from resolvers.services.events.hub import EventHub
from tests.conftest import Tenant, app_on, make_tenant
from tests.documents.conftest import doc
from tests.events.streams import SseReader
from tests.live import Threaded, app_in_thread

PROTOCOL = "graphql-transport-ws"
SUBSCRIPTION = """subscription Live($after: String) {
  documentEvents(after: $after) {
    id type documentId at document { id processingStatus merchant amount currency }
  }
}"""


@dataclass
class Setup:
    store: Store
    alice: Tenant
    bob: Tenant
    writer_key: str  # Alice's workspace, without read_documents
    hub: EventHub


async def make_setup(port: int) -> tuple[ASGIApp, Setup]:
    store = Store(AsyncMongoMockClient(tz_aware=True)[f"fincap_{uuid.uuid4().hex[:8]}"])
    await store.ensure_indexes()
    alice = await make_tenant(store, "alice@example.com", "Alice Co")
    bob = await make_tenant(store, "bob@example.com", "Bob Ltd")
    writer_key = new_api_key_secret()
    await store.api_keys.create(
        alice.user_id, writer_key, restricted_to=alice.org_id, scopes=["write_documents"]
    )
    app = app_on(store, settings=Settings(port=port, events_poll_seconds=0.05))
    return app, Setup(store, alice, bob, writer_key, app.state.services.events)


@pytest.fixture(scope="module")
def served() -> Iterator[Threaded[Setup]]:
    with app_in_thread(make_setup) as server:
        yield server


def ws_url(base: str) -> str:
    return base.replace("http://", "ws://") + "/v1/graphql"


def init_payload(tenant: Tenant, key: str | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key or tenant.api_key}", "X-Service-Org-Id": tenant.org_id}


async def receive(ws: ClientConnection, timeout: float = 10) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), timeout))
    return message


async def subscribed(ws: ClientConnection, payload: dict[str, str], sub_id: str = "1") -> None:
    await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
    assert (await receive(ws))["type"] == "connection_ack"
    await ws.send(
        json.dumps({"id": sub_id, "type": "subscribe", "payload": {"query": SUBSCRIPTION}})
    )


async def next_data(ws: ClientConnection, timeout: float = 10) -> dict[str, Any]:
    message = await receive(ws, timeout)
    assert message["type"] == "next", message
    event: dict[str, Any] = message["payload"]["data"]["documentEvents"]
    return event


async def sse_messages(
    client: httpx.AsyncClient, url: str, headers: dict[str, str]
) -> AsyncIterator[Any]:
    async with client.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        reader = SseReader()
        async for text in response.aiter_text():
            reader.feed(text)
            while reader.pending:
                yield reader.pending.pop(0)


async def wait_for_subscribers(served: Threaded[Setup], count: int) -> None:
    """Until the server's hub holds ``count`` subscriptions (a subscription starts a moment
    after the client's request; a length read from this thread is safe)."""
    for _ in range(3000):  # a hang guard of a minute, for a loaded machine
        if served.setup.hub.subscribers() >= count:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the subscriptions did not start")


async def test_sse_over_a_socket_delivers_the_processed_document(
    served: Threaded[Setup],
) -> None:
    alice, store = served.setup.alice, served.setup.store
    async with httpx.AsyncClient(timeout=10) as client:
        messages = sse_messages(client, f"{served.base}/v1/events", alice.headers())
        first = asyncio.ensure_future(anext(messages))
        await wait_for_subscribers(served, 1)
        served.run(store.documents.writes.insert_many(alice.org_id, [doc("doc_sse")]))
        created = await asyncio.wait_for(first, 10)
        await messages.aclose()
    assert created.event == "document.created"
    assert created.data["document"]["merchant"] == "Shell"


async def test_graphql_subscription_over_websocket_is_tenant_scoped(
    served: Threaded[Setup],
) -> None:
    setup = served.setup
    async with (
        connect(ws_url(served.base), subprotocols=[PROTOCOL]) as alices,  # type: ignore[list-item]
        connect(ws_url(served.base), subprotocols=[PROTOCOL]) as bobs,  # type: ignore[list-item]
    ):
        await subscribed(alices, init_payload(setup.alice))
        await subscribed(bobs, init_payload(setup.bob))
        await wait_for_subscribers(served, 2)
        served.run(
            setup.store.documents.writes.insert_many(
                setup.alice.org_id, [doc("doc_ws", processingStatus="queued")]
            )
        )
        served.run(
            setup.store.documents.writes.set_processing(setup.alice.org_id, "doc_ws", "processed")
        )
        created, processed = await next_data(alices), await next_data(alices)
        assert (created["type"], created["documentId"]) == ("document_created", "doc_ws")
        assert processed["type"] == "document_processed"
        assert processed["document"] == {
            "id": "doc_ws",
            "processingStatus": "processed",
            "merchant": "Shell",
            "amount": "10.00",
            "currency": "EUR",
        }
        with pytest.raises(TimeoutError):  # Bob's subscription heard nothing of it
            await receive(bobs, timeout=1.0)


async def test_graphql_subscription_needs_credentials_and_read_documents(
    served: Threaded[Setup],
) -> None:
    setup = served.setup
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        with pytest.raises(ConnectionClosed) as closed:
            await receive(ws)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4403
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await subscribed(ws, init_payload(setup.alice, setup.writer_key))
        message, then = await receive(ws), await receive(ws)
    # An error of the field (execution started): a result with errors, then the end.
    assert message["type"] == "next" and message["payload"]["data"] is None
    extensions = message["payload"]["errors"][0]["extensions"]
    assert (extensions["status"], extensions["reason"]) == (403, "missing_scope")
    assert then == {"id": "1", "type": "complete"}


async def test_a_store_lost_while_a_subscription_opens_is_service_unavailable(
    served: Threaded[Setup], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The subscription's opening reads the events it already knows; a store lost right then
    (seen in CI: the store killed while a subscription was opening) ends it with the outage's
    error, as every other read answers it, not an internal one."""
    from pymongo.errors import AutoReconnect

    async def lost(*args: object, **kwargs: object) -> object:
        raise AutoReconnect("127.0.0.1:1: [Errno 104] Connection reset by peer")

    monkeypatch.setattr(served.setup.hub._log, "recent", lost)
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await subscribed(ws, init_payload(served.setup.alice))
        message, then = await receive(ws), await receive(ws)
    assert message["type"] == "next" and message["payload"]["data"] is None
    [error] = message["payload"]["errors"]
    assert error["extensions"]["code"] == "SERVICE_UNAVAILABLE"
    assert error["extensions"]["retryAfter"] > 0
    assert "Connection reset" not in json.dumps(message)
    assert then == {"id": "1", "type": "complete"}


async def test_a_server_with_open_streams_stops_at_once() -> None:
    """uvicorn waits for open responses before it stops; the server ends the event streams
    first, so both kinds of client see their stream end and the server thread ends."""
    server = app_in_thread(make_setup)
    running = server.__enter__()
    setup = running.setup
    sse_ended = asyncio.Event()

    async def read_sse() -> None:
        async with httpx.AsyncClient(timeout=30) as client:
            async for _ in sse_messages(client, f"{running.base}/v1/events", setup.alice.headers()):
                pass
        sse_ended.set()

    reading = asyncio.ensure_future(read_sse())
    async with connect(ws_url(running.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await subscribed(ws, init_payload(setup.alice))
        await wait_for_subscribers(running, 2)
        started = time.monotonic()
        await asyncio.to_thread(server.__exit__, None, None, None)
        stopped_in = time.monotonic() - started
        # The subscription may say complete before uvicorn closes the socket as restarting.
        with pytest.raises(ConnectionClosed) as closed:
            while (await receive(ws))["type"] == "complete":
                pass
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
    await asyncio.wait_for(reading, 5)
    assert sse_ended.is_set()
    assert stopped_in < 10, f"the server took {stopped_in:.1f} s to stop"
