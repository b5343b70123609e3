"""Attacks on the GraphQL WebSocket (issue 35): messages bounded before they are parsed, deep
JSON, an oversized document, operations per socket, and queries authorized when they run.

Starlette's test client speaks the WebSocket to the app in-process; every wait is for a message
or the socket's close (the test client's receive blocks until one comes).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketTestSession
from starlette.websockets import WebSocketDisconnect

from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from tests.conftest import Tenant, app_on, member_of

PROTOCOL = "graphql-transport-ws"
SUBSCRIPTION = "subscription { documentEvents { type documentId } }"


def client_on(store: Store, **settings: Any) -> TestClient:
    return TestClient(app_on(store, settings=Settings(events_poll_seconds=0.05, **settings)))


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    with client_on(store) as test_client:
        yield test_client


def payload_of(tenant: Tenant, key: str | None = None) -> dict[str, str]:
    return {"Authorization": f"Bearer {key or tenant.api_key}", "X-Service-Org-Id": tenant.org_id}


def opened(ws: WebSocketTestSession, payload: dict[str, str]) -> None:
    ws.send_json({"type": "connection_init", "payload": payload})
    assert ws.receive_json()["type"] == "connection_ack"


def closed_with(ws: WebSocketTestSession) -> WebSocketDisconnect:
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            ws.receive_json()
    return closed.value


def test_a_large_message_before_connection_init_is_refused_unparsed(
    client: TestClient, alice: Tenant
) -> None:
    """16 MB messages were read and parsed before anyone said who they were (+600 MB for 40)."""
    with client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws:
        filler = "a" * 100_000
        ws.send_text('{"type": "connection_init", "payload": {"x": "' + filler + '"}}')
        refused = closed_with(ws)
    assert refused.code == 1009
    assert "bytes" in refused.reason


def test_a_large_message_after_connection_init_is_refused_unparsed(
    client: TestClient, alice: Tenant
) -> None:
    with client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws:
        opened(ws, payload_of(alice))
        ws.send_text('{"type": "ping", "payload": {"x": "' + "a" * 2_000_000 + '"}}')
        assert closed_with(ws).code == 1009


def test_deep_json_closes_the_socket_with_a_reason(client: TestClient, alice: Tenant) -> None:
    """100,000 brackets raised RecursionError in the socket's handler."""
    with client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws:
        opened(ws, payload_of(alice))
        ws.send_text("[" * 5000 + "]" * 5000)
        refused = closed_with(ws)
    assert refused.code == 4400
    assert "nest" in refused.reason


def test_an_oversized_document_gets_an_error_saying_why(client: TestClient, alice: Tenant) -> None:
    """A document over 64 KB got a bare ``complete``: the client could not tell why."""
    document = "{ __typename }\n#" + "x" * 70_000
    with client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws:
        opened(ws, payload_of(alice))
        ws.send_json({"id": "big", "type": "subscribe", "payload": {"query": document}})
        answer = ws.receive_json()
    assert answer["type"] == "error" and answer["id"] == "big"
    assert "bytes" in answer["payload"][0]["message"]


def test_operations_in_flight_are_capped_per_socket(store: Store, alice: Tenant) -> None:
    """Strawberry allowed 100 operations in flight on one socket, and the probe ran 2,000."""
    with (
        client_on(store, ws_operations=2) as client,
        client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws,
    ):
        opened(ws, payload_of(alice))
        for n in range(3):
            ws.send_json({"id": f"s{n}", "type": "subscribe", "payload": {"query": SUBSCRIPTION}})
        refused = ws.receive_json()
        assert (refused["id"], refused["type"]) == ("s2", "error")
        assert refused["payload"][0]["extensions"]["reason"] == "too_many_requests"
        # Ending one frees its place.
        ws.send_json({"id": "s0", "type": "complete"})
        ws.send_json({"id": "q", "type": "subscribe", "payload": {"query": "{ __typename }"}})
        assert ws.receive_json()["type"] == "next"


def test_operations_in_flight_are_capped_per_member(store: Store, alice: Tenant) -> None:
    with client_on(store, ws_operations=5, ws_operations_per_member=3) as client:
        sockets = [
            client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) for _ in range(2)
        ]
        with sockets[0] as first, sockets[1] as second:
            opened(first, payload_of(alice))
            opened(second, payload_of(alice))
            for n in range(2):
                first.send_json(
                    {"id": f"a{n}", "type": "subscribe", "payload": {"query": SUBSCRIPTION}}
                )
            second.send_json({"id": "b0", "type": "subscribe", "payload": {"query": SUBSCRIPTION}})
            second.send_json({"id": "b1", "type": "subscribe", "payload": {"query": SUBSCRIPTION}})
            refused = second.receive_json()
    assert (refused["id"], refused["type"]) == ("b1", "error")
    assert "member" in refused["payload"][0]["message"]


def test_a_query_on_an_open_socket_is_authorized_when_it_runs(
    client: TestClient, store: Store, alice: Tenant
) -> None:
    """The socket kept the authorization of its first query and answered with it after the
    key was revoked."""
    assert client.portal is not None
    secret = new_api_key_secret()
    key = client.portal.call(
        lambda: store.api_keys.create(alice.user_id, secret, restricted_to=alice.org_id)
    )
    with client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws:
        opened(ws, payload_of(alice, secret))
        query = {"query": "{ workspace { id } }"}
        ws.send_json({"id": "q1", "type": "subscribe", "payload": query})
        assert ws.receive_json()["payload"]["data"] == {"workspace": {"id": alice.org_id}}
        assert ws.receive_json()["type"] == "complete"
        # Revoked by another process: only the store tells this one.
        client.portal.call(Store(store.db).api_keys.revoke, alice.user_id, key["_id"])
        refused = closed_with(ws)
    assert refused.code == 4403


def test_a_subscription_ends_with_an_error_when_its_members_role_changes(
    client: TestClient, store: Store, alice: Tenant
) -> None:
    """The socket stays (its member may still read); the subscription ends saying why, and a
    new one runs under the new role."""
    assert client.portal is not None
    carol = client.portal.call(member_of, store, alice, "carol@example.com", "admin")
    with client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws:
        opened(ws, payload_of(carol))
        ws.send_json({"id": "s", "type": "subscribe", "payload": {"query": SUBSCRIPTION}})
        hub = client.app.state.services.events  # type: ignore[attr-defined]
        while not hub.subscribers():
            client.portal.call(hub.access_read.wait_for, 1)
        client.portal.call(
            partial(Store(store.db).workspaces.change_role, may_touch_owner=True),
            alice.org_id,
            carol.user_id,
            "member",
        )
        ended = ws.receive_json()
        assert ended["type"] == "next" and ended["id"] == "s"
        assert ended["payload"]["errors"][0]["extensions"]["reason"] == "access_changed"
        assert ws.receive_json() == {"id": "s", "type": "complete"}
        ws.send_json({"id": "q", "type": "subscribe", "payload": {"query": "{ workspace { id } }"}})
        assert ws.receive_json()["payload"]["data"] == {"workspace": {"id": alice.org_id}}
