"""Items 2, 3 and 12: bodies are bounded while they stream; JSON and GraphQL documents are
bounded before parsing; malformed bodies are 400s in each face's own shape."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from app.graphql.limits import Limits
from app.host.config import Settings
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, app_on

LIMIT = 256 * 1024
CHUNK = 16 * 1024
GRAPHQL = "/v1/graphql"


@pytest.fixture
async def small_limit(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    app = app_on(store, registry, Settings(max_body_bytes=LIMIT))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        yield http


class Endless:
    """A chunked body of ``total`` bytes that counts how much the server pulled."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while self.pulled < self.total:
            self.pulled += CHUNK
            yield b" " * CHUNK


@pytest.mark.parametrize("path", ["/v1/capabilities/workspaces.list", GRAPHQL])
async def test_a_chunked_body_is_cut_off_at_the_limit(
    small_limit: httpx.AsyncClient, path: str
) -> None:
    """The 300 MB chunked body without any key (scaled down): answered 413 once the limit is
    passed, having read no more than the limit and one chunk."""
    body = Endless(300 * 1024 * 1024)
    response = await small_limit.post(
        path, content=body, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413
    assert body.pulled <= LIMIT + CHUNK
    if path == GRAPHQL:
        assert response.json()["errors"][0]["extensions"] == {
            "code": "PAYLOAD_TOO_LARGE",
            "status": 413,
            "reason": "payload_too_large",
        }
    else:
        assert response.json()["error"] == {
            "errorCode": 413,
            "errorMessage": f"Request body exceeds {LIMIT} bytes",
            "reason": "payload_too_large",
        }


@pytest.mark.parametrize("path", ["/v1/capabilities/workspaces.list", GRAPHQL])
async def test_a_declared_oversize_body_is_refused_unread(
    small_limit: httpx.AsyncClient, path: str
) -> None:
    body = Endless(LIMIT + 1)
    response = await small_limit.post(
        path,
        content=body,
        headers={"content-type": "application/json", "content-length": str(LIMIT + 1)},
    )
    assert response.status_code == 413
    assert body.pulled == 0


async def test_bodies_at_the_limit_still_work(small_limit: httpx.AsyncClient) -> None:
    padded = b'{"query": "{ __typename }"' + b" " * (LIMIT - 100) + b"}"
    response = await small_limit.post(
        GRAPHQL, content=padded, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200 and response.json() == {"data": {"__typename": "Query"}}


DEEP = b"[" * 100_000


async def test_deeply_nested_json_is_a_rest_400(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/v1/capabilities/workspaces.list",
        content=DEEP,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["errorMessage"] == (
        "Malformed JSON body: arrays and objects nest more than 64 levels deep"
    )


@pytest.mark.parametrize("accept", ["application/json", "application/graphql-response+json"])
async def test_deeply_nested_json_is_a_graphql_shaped_400(
    client: httpx.AsyncClient, accept: str
) -> None:
    response = await client.post(
        GRAPHQL, content=DEEP, headers={"content-type": "application/json", "accept": accept}
    )
    assert response.status_code == 400
    body = response.json()
    assert "success" not in body and "data" not in body  # not the REST envelope
    [error] = body["errors"]
    assert "nest more than 64 levels" in error["message"]
    assert error["extensions"] == {
        "code": "BAD_REQUEST",
        "status": 400,
        "reason": "invalid_request",
    }
    # The same through GET's variables parameter.
    got = await client.get(GRAPHQL, params={"query": "{ __typename }", "variables": "[" * 10_000})
    assert got.status_code == 400 and "nest more than 64" in got.json()["errors"][0]["message"]


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 1000 + b"]" * 1000,  # valid JSON a thousand levels deep
        b"[" * 100_000,
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":' + b"[" * 1000,
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":'
        + b"[" * 1000
        + b"]" * 1000
        + b"}}",
    ],
)
async def test_deeply_nested_json_is_a_json_rpc_400_on_mcp(
    client: httpx.AsyncClient, body: bytes
) -> None:
    response = await client.post(
        "/mcp",
        content=body,
        headers={
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        },
    )
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "message": "Parse error: arrays and objects nest more than 64 levels deep",
        },
    }


async def test_json_at_the_depth_limit_reaches_validation(client: httpx.AsyncClient) -> None:
    nested = b'{"x":' * 63 + b"1" + b"}" * 63
    response = await client.post(
        "/v1/capabilities/currency.convert",
        content=nested,
        headers={"content-type": "application/json"},
    )
    assert response.status_code == 401  # parsed, then refused for the missing key


async def test_megabytes_of_comments_are_refused_before_parsing(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    """15 MB of comments held the event loop 2-4 s per request; now the document's size is
    checked before the lexer reads it. (With a credential: without one, a body this size is
    refused before it is read, test_anonymous_bodies.py.)"""
    document = "{ __typename }\n" + "#" * 15_000_000
    response = await client.post(
        GRAPHQL,
        json={"query": document},
        headers={"accept": "application/graphql-response+json", **alice.headers()},
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["message"] == (
        f"The GraphQL document has {len(document)} bytes. Allowed: {Limits().max_document_bytes}"
    )
    at_limit = "{ __typename }\n#" + "c" * (Limits().max_document_bytes - 20)
    ok = await client.post(GRAPHQL, json={"query": at_limit})
    assert ok.status_code == 200 and ok.json() == {"data": {"__typename": "Query"}}
