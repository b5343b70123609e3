"""Edit history never makes a document write fail, however many large corrections it records."""

from __future__ import annotations

import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import asgi_client, make_tenant
from tests.documents.conftest import call, doc, result

pytestmark = pytest.mark.wire

LINES = 500


def line_items(version: int) -> list[dict[str, object]]:
    """500 lines with long descriptions: each list is ~300 KB of BSON."""
    return [
        {
            "description": f"v{version} line {n:03d} " + "x" * 480,
            "quantity": 1,
            "unitPrice": 1.25,
            "amount": 1.25,
        }
        for n in range(LINES)
    ]


async def test_many_large_corrections_are_all_kept(wire_store: Store, registry: Registry) -> None:
    # Each correction of 500 line items records ~600 KB (old and new list); kept inside the
    # document, the 31st such update crossed MongoDB's 16 MB document limit and failed.
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await wire_store.documents.writes.insert_many(alice.org_id, [doc("doc_big")])
    async with asgi_client(wire_store, registry) as http:
        for version in range(32):
            response = await call(
                http, alice, "documents.update", {"id": "doc_big", "lineItems": line_items(version)}
            )
            assert response.status_code == 200, (version, response.text[:300])
        document = result(await call(http, alice, "documents.get", {"id": "doc_big"}))["document"]
    assert document["lineItems"][0]["description"].startswith("v31 line 000")
    history = document["editHistory"]
    assert len(history) == 32 and all(entry["field"] == "lineItems" for entry in history)
    assert history[0]["oldValue"] is None
    assert history[-1]["newValue"][0]["description"].startswith("v31 line 000")
    assert history[-1]["oldValue"][0]["description"].startswith("v30 line 000")
