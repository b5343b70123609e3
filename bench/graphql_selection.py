"""GraphQL ``documentsSearch`` of 100 documents selecting a list view with line items: what the
selection costs when it is the output mode.

The query says ``outputMode: complete``, which GraphQL needed before the selection became the
output mode (line items were null otherwise) and which it now ignores, reading only the selected
fields. Run it on a commit before that change and on one after to compare; each run prints the
median of several runs of sequential calls and the load average.
The store is the embedded server (SecantusDB) over a real socket; the app runs in-process behind
httpx's ASGI transport.

    .venv/bin/python bench/graphql_selection.py [--calls 20] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import uuid
from pathlib import Path

import httpx

# Run as a script, sys.path[0] is bench/, where this file would shadow the graphql package.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from app.host.config import Settings
from bench.graphql_vs_rest import bench_documents, time_calls
from bench.harness import discard, load_average, serving_app
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.services.auth import accounts

DOCUMENTS = 100
QUERY = """
{
  documentsSearch(input: {limit: 100, useSearch: false, outputMode: complete}) {
    documents { id merchant amount currency docDate summary lineItems { description amount } }
  }
}
"""


async def main(calls: int, runs: int) -> None:
    server = EmbeddedServer(storage=":memory:").start()
    try:
        client, db = connect(server.uri, f"bench_{uuid.uuid4().hex[:8]}")
        store = Store(db)
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
        await store.documents.writes.insert_many(tenant["orgId"], bench_documents(DOCUMENTS))
        headers = {
            "Authorization": f"Bearer {tenant['apiKey']}",
            "X-Service-Org-Id": tenant["orgId"],
        }
        app = serving_app(Settings(), store)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench.test") as http:

            async def graphql() -> None:
                response = await http.post("/v1/graphql", json={"query": QUERY}, headers=headers)
                payload = response.json()
                assert "errors" not in payload, payload["errors"][:3]
                documents = payload["data"]["documentsSearch"]["documents"]
                assert len(documents) == DOCUMENTS and any(d["lineItems"] for d in documents)

            medians = [await time_calls(graphql, calls) for _ in range(runs)]
        client.close()
    finally:
        discard(server)
    print(f"GraphQL documentsSearch, {DOCUMENTS} documents, id merchant amount currency docDate")
    print("summary lineItems{description amount}; embedded store over a socket, ASGI in-process")
    print(f"  {statistics.median(medians):7.2f} ms median per call ({load_average()})")
    print(f"  (median of {runs} runs × {calls} calls: {', '.join(f'{m:.1f}' for m in medians)})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.runs))
