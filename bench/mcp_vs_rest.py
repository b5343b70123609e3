"""MCP ``tools/call documents_search`` against REST ``documents.search``, same token, same data.

Both run in-process behind httpx's ASGI transport over one in-memory store (mongomock-motor)
holding 100 complete documents, with the same OAuth access token (obtained through the whole
authorization flow). The difference is the MCP face's work: the token gate, a fresh stateless
SDK transport per request, JSON-RPC framing, and the result sent twice (structured content and
its JSON text). Prints the median of several runs per face and the ratio.

    .venv/bin/python bench/mcp_vs_rest.py [--calls 30] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
from mongomock_motor import AsyncMongoMockClient

# Run as a script, sys.path[0] is bench/; the project root is what the imports need.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from app.host.config import Settings
from bench.graphql_vs_rest import DOCUMENTS, SEARCH, bench_documents, time_calls
from bench.harness import load_average, serving_app
from persistence.store import Store
from resolvers.services.auth import accounts
from resolvers.services.auth.oauth import set_password
from tests.mcp.oauth_client import whole_flow

PASSWORD = "bench password 1"


async def main(calls: int, runs: int) -> None:
    store = Store(AsyncMongoMockClient(tz_aware=True)[f"bench_{uuid.uuid4().hex[:8]}"])
    await store.ensure_indexes()
    tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
    await set_password(store, "bench@example.com", PASSWORD)
    await store.documents.writes.insert_many(tenant["orgId"], bench_documents(DOCUMENTS))
    app = serving_app(Settings(), store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        tokens = await whole_flow(
            client, "bench@example.com", PASSWORD, tenant["orgId"], scope="read_documents"
        )
        bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
        message: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "documents_search", "arguments": SEARCH},
        }
        mcp_headers = {**bearer, "Accept": "application/json, text/event-stream"}

        async def rest() -> None:
            response = await client.post(
                "/v1/capabilities/documents.search", json=SEARCH, headers=bearer
            )
            assert response.status_code == 200, response.text
            assert len(response.json()["data"]["result"]["documents"]) == DOCUMENTS

        async def mcp() -> None:
            response = await client.post("/mcp", json=message, headers=mcp_headers)
            result = response.json()["result"]
            assert result["isError"] is False, result
            assert len(result["structuredContent"]["documents"]) == DOCUMENTS

        rest_runs, mcp_runs = [], []
        for _ in range(runs):
            rest_runs.append(await time_calls(rest, calls))
            mcp_runs.append(await time_calls(mcp, calls))
    rest_ms, mcp_ms = statistics.median(rest_runs), statistics.median(mcp_runs)
    print(f"documents.search, {DOCUMENTS} complete documents, in-memory store, ASGI in-process")
    print(f"  REST POST /v1/capabilities/documents.search : {rest_ms:7.2f} ms median")
    print(f"  MCP  tools/call documents_search            : {mcp_ms:7.2f} ms median")
    print(f"  ratio MCP / REST                            : {mcp_ms / rest_ms:7.2f}x")
    print(f"  ({load_average()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=30, help="calls per run and face")
    parser.add_argument("--runs", type=int, default=5, help="runs per face (median taken)")
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.runs))
