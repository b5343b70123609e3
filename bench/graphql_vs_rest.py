"""GraphQL ``documentsSearch`` against REST ``documents.search`` for the same 100 documents.

Both faces run in-process behind httpx's ASGI transport over one in-memory store
(mongomock-motor), so the difference is the face's own work: GraphQL parsing, validation and
per-field completion against REST's one ``model_dump`` and ``json.dumps``. The 100 documents
carry line items, a location, a file reference, edit history and duplicate links; GraphQL selects
every field REST returns (complete output mode). Prints the median of several runs per face and
the ratio.

    .venv/bin/python bench/graphql_vs_rest.py [--calls 30] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from mongomock_motor import AsyncMongoMockClient

# Run as a script, sys.path[0] is bench/, where this file would shadow the graphql package.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from app.host.config import Settings
from bench.harness import load_average, serving_app
from engines.demo import demo_documents
from persistence.store import Store
from resolvers.services.auth import accounts

# The in-memory store as the tests set it up: mongomock accepts the store's journaled writes.
from tests import mongomock_compat  # noqa: F401

DOCUMENTS = 100
SEARCH: dict[str, Any] = {"limit": 100, "outputMode": "complete", "useSearch": False}
# Every field REST returns for a complete document, nested objects included.
QUERY = """
query Search($input: SearchDocumentsInput!) {
  documentsSearch(input: $input) {
    nextCursor
    documents {
      id merchant amount currency preferredCurrency conversionRate docDate date receivedAt
      category docType summary invoiceId receiptId paymentStatus paymentMethod
      paymentMethodEnding fromEmail toEmail taxAmount subtotal isRecurring recurringType
      entityId entityName exportStatus link source archived archivedAt processingStatus
      processingReason duplicateOfId duplicateIds createdAt updatedAt
      expenseLocation { primary { countryCode country city stateOrProvince kind } }
      lineItems { description quantity unitPrice amount taxAmount }
      file { fileName mimeType size sha256 url }
      editHistory { field oldValue newValue editedBy editedAt via }
    }
  }
}
"""


def bench_documents(count: int) -> list[dict[str, Any]]:
    """Demo documents with a file, two edits each and every tenth one a duplicate."""
    documents = demo_documents(count, seed=7)
    edited_at = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
    for position, document in enumerate(documents):
        document["archived"] = False  # the demo archives a few; the bench wants a full page
        document["file"] = {
            "fileName": f"receipt-{position}.pdf",
            "mimeType": "application/pdf",
            "size": 20_000 + position,
            "sha256": f"{position:064x}",
        }
        document["editHistory"] = [
            {
                "field": "merchant",
                "oldValue": "Old name",
                "newValue": document.get("merchant"),
                "editedBy": "usr_bench",
                "editedAt": edited_at,
                "via": "documents.update",
            },
            {
                "field": "amount",
                "oldValue": 1.0,
                "newValue": 2.0,
                "editedBy": "usr_bench",
                "editedAt": edited_at,
                "via": "documents.update",
            },
        ]
    for position in range(10, count, 10):
        original, duplicate = documents[position - 10], documents[position]
        duplicate["duplicateOf"] = original["_id"]
        original["duplicates"] = [duplicate["_id"]]
    return documents


async def time_calls(send: Any, calls: int) -> float:
    """Median milliseconds of ``calls`` sequential requests (after one warm-up)."""
    await send()
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await send()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def main(calls: int, runs: int) -> None:
    store = Store(AsyncMongoMockClient(tz_aware=True)[f"bench_{uuid.uuid4().hex[:8]}"])
    await store.ensure_indexes()
    tenant = await accounts.bootstrap(store, "bench@example.com", "Bench")
    await store.documents.writes.insert_many(tenant["orgId"], bench_documents(DOCUMENTS))
    headers = {"Authorization": f"Bearer {tenant['apiKey']}", "X-Service-Org-Id": tenant["orgId"]}
    app = serving_app(Settings(), store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench.test") as client:

        async def rest() -> None:
            response = await client.post(
                "/v1/capabilities/documents.search", json=SEARCH, headers=headers
            )
            assert response.status_code == 200, response.text
            assert len(response.json()["data"]["result"]["documents"]) == DOCUMENTS

        async def graphql() -> None:
            body = {"query": QUERY, "variables": {"input": SEARCH}}
            response = await client.post("/v1/graphql", json=body, headers=headers)
            payload = response.json()
            assert "errors" not in payload, payload["errors"][:3]
            assert len(payload["data"]["documentsSearch"]["documents"]) == DOCUMENTS

        rest_runs, graphql_runs = [], []
        for _ in range(runs):
            rest_runs.append(await time_calls(rest, calls))
            graphql_runs.append(await time_calls(graphql, calls))
    rest_ms, graphql_ms = statistics.median(rest_runs), statistics.median(graphql_runs)
    print(f"documents.search, {DOCUMENTS} complete documents, in-memory store, ASGI in-process")
    print(f"  REST    POST /v1/capabilities/documents.search : {rest_ms:7.2f} ms median")
    print(f"  GraphQL documentsSearch (every field, nested)  : {graphql_ms:7.2f} ms median")
    print(f"  ratio GraphQL / REST                           : {graphql_ms / rest_ms:7.2f}x")
    rest_list = ", ".join(f"{ms:.1f}" for ms in rest_runs)
    graphql_list = ", ".join(f"{ms:.1f}" for ms in graphql_runs)
    print(
        f"  (median of {runs} runs × {calls} calls; runs: REST {rest_list}; GraphQL {graphql_list})"
    )
    print(f"  ({load_average()})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    asyncio.run(main(options.calls, options.runs))
