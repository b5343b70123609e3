"""The GraphQL subscription through the ASGI app (Starlette's test client speaks the WebSocket
to it in-process): the events of the caller's workspace, queries on the same socket with the
socket's credentials, and the workspace check of ``connection_init``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient, WebSocketTestSession
from starlette.websockets import WebSocketDisconnect

from persistence.store import Store
from tests.conftest import Tenant, app_on
from tests.documents.conftest import doc

PROTOCOL = "graphql-transport-ws"
SUBSCRIPTION = "subscription { documentEvents { type documentId document { merchant amount } } }"


@pytest.fixture
def client(store: Store) -> Iterator[TestClient]:
    with TestClient(app_on(store)) as test_client:
        yield test_client


def opened(ws: WebSocketTestSession, payload: dict[str, str]) -> None:
    ws.send_json({"type": "connection_init", "payload": payload})
    assert ws.receive_json()["type"] == "connection_ack"


def payload_of(tenant: Tenant, org: str | None = None) -> dict[str, Any]:
    return {"Authorization": f"Bearer {tenant.api_key}", "X-Service-Org-Id": org or tenant.org_id}


def test_the_subscription_through_asgi(client: TestClient, store: Store, alice: Tenant) -> None:
    assert client.portal is not None
    with client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws:
        opened(ws, payload_of(alice))
        ws.send_json({"id": "q", "type": "subscribe", "payload": {"query": "{ workspace { id } }"}})
        assert ws.receive_json()["payload"]["data"] == {"workspace": {"id": alice.org_id}}
        assert ws.receive_json() == {"id": "q", "type": "complete"}
        ws.send_json({"id": "s", "type": "subscribe", "payload": {"query": SUBSCRIPTION}})
        for _ in range(6000):  # until the subscription has started on the app's loop (60 s)
            if client.app.state.services.events.subscribers():  # type: ignore[attr-defined]
                break
            client.portal.call(_pause)
        else:
            raise AssertionError("the subscription did not start")
        client.portal.call(store.documents.writes.insert_many, alice.org_id, [doc("doc_g")])
        message = ws.receive_json()
    assert message["type"] == "next"
    assert message["payload"]["data"]["documentEvents"] == {
        "type": "document_created",
        "documentId": "doc_g",
        "document": {"merchant": "Shell", "amount": "10.00"},
    }


def test_connection_init_checks_the_workspace(
    client: TestClient, alice: Tenant, bob: Tenant
) -> None:
    with client.websocket_connect("/v1/graphql", subprotocols=[PROTOCOL]) as ws:
        ws.send_json({"type": "connection_init", "payload": payload_of(bob, alice.org_id)})
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
    assert closed.value.code == 4403


async def _pause() -> None:
    await asyncio.sleep(0.01)


def test_a_subscription_over_http_is_a_clear_400(client: TestClient, alice: Tenant) -> None:
    """POSTed, a subscription ran as a query and answered "Internal server error" with a
    null; it now says where subscriptions are served."""
    for body in (
        {"query": SUBSCRIPTION},
        {
            "query": "query Q { workspace { id } } "
            + SUBSCRIPTION.replace("subscription", "subscription S"),
            "operationName": "S",
        },
    ):
        answer = client.post("/v1/graphql", json=body, headers=payload_of(alice))
        assert answer.status_code == 400, answer.text
        assert "graphql-transport-ws" in answer.json()["errors"][0]["message"]
    # A query naming the word elsewhere runs as usual.
    fine = client.post(
        "/v1/graphql",
        json={"query": "query subscription { workspace { id } }"},
        headers=payload_of(alice),
    )
    assert fine.status_code == 200 and fine.json()["data"]["workspace"]["id"] == alice.org_id
