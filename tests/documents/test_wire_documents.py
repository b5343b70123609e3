"""Documents capabilities against SecantusDB over the wire: the same behaviour as in memory."""

from __future__ import annotations

import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import asgi_client, make_tenant
from tests.documents.conftest import KNOWN, call, doc, result

pytestmark = pytest.mark.wire


async def test_documents_over_the_wire(wire_store: Store, registry: Registry) -> None:
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    bob = await make_tenant(wire_store, "bob@example.com", "Bob Ltd")
    await wire_store.documents.writes.insert_many(alice.org_id, KNOWN)
    await wire_store.documents.writes.insert_many(
        bob.org_id, [doc("doc_bob", merchant="Starbucks")]
    )
    async with asgi_client(wire_store, registry) as http:
        page = result(
            await call(
                http,
                alice,
                "documents.search",
                {"useSearch": False, "sortBy": "amount", "limit": 3},
            )
        )
        assert [d["id"] for d in page["documents"]] == ["doc_b", "doc_d", "doc_a"]
        second = result(
            await call(
                http,
                alice,
                "documents.search",
                {"useSearch": False, "sortBy": "amount", "limit": 3, "cursor": page["nextCursor"]},
            )
        )
        assert [d["id"] for d in second["documents"]] == ["doc_e", "doc_c", "doc_f"]

        ranked = result(await call(http, alice, "documents.search", {"query": "starbucks latte"}))
        assert ranked["documents"][0]["id"] == "doc_a"
        assert "doc_bob" not in [d["id"] for d in ranked["documents"]]

        counted = result(await call(http, alice, "documents.count", {"groupBy": "month"}))
        assert counted["count"] == 6
        assert [(g["key"], g["count"]) for g in counted["groups"]] == [
            ("2023-12", 1),
            ("2024-01", 2),
            ("2024-02", 2),
            (None, 1),
        ]
        assert counted["totals"] == [
            {"currency": "EUR", "amount": 64.5},
            {"currency": "USD", "amount": 60.09},
        ]

        # ISO weeks from the documents ($dateToString %G-W%V on the embedded server; an
        # amount condition keeps the rollups out), the empty weeks filled with zeros.
        weekly = {
            "groupBy": "week",
            "fillGaps": True,
            "where": {"conditions": [{"field": "amount", "op": "gt", "value": 0}]},
        }
        weeks = result(await call(http, alice, "documents.count", weekly))
        assert [(g["key"], g["count"]) for g in weeks["groups"]] == [
            ("2023-W52", 1),
            ("2024-W01", 1),
            ("2024-W02", 0),
            ("2024-W03", 1),
            ("2024-W04", 0),
            ("2024-W05", 2),
        ]

        regex = result(
            await call(
                http,
                alice,
                "documents.search",
                {
                    "useSearch": False,
                    "where": {
                        "conditions": [{"field": "merchant", "op": "regex", "value": "^STAR"}]
                    },
                },
            )
        )
        assert {d["id"] for d in regex["documents"]} == {"doc_a", "doc_e"}

        updated = result(
            await call(http, alice, "documents.update", {"id": "doc_c", "amount": 0.3})
        )
        assert updated["document"]["amount"] == 0.3 and len(updated["document"]["editHistory"]) == 1

        deleted = result(await call(http, alice, "documents.delete", {"id": "doc_c"}))
        assert deleted["document"]["archived"] is True
        assert (await call(http, bob, "documents.get", {"id": "doc_a"})).status_code == 404

        # This workspace runs bulk edits without approval (approvals have their own tests).
        settings = result(
            await call(
                http,
                alice,
                "approvals.configure",
                {"capabilitySlug": "documents.bulk-edit", "gated": False},
            )
        )
        assert {"slug": "documents.bulk-edit", "name": "documentsBulkEdit", "gated": False} in (
            settings["capabilities"]
        )
        done = result(
            await call(
                http,
                alice,
                "documents.bulk-edit",
                {"merchant": "Starbucks", "changes": {"category": "Coffee"}, "dryRun": False},
            )
        )
        assert done["modified"] == 2
        untouched = result(await call(http, bob, "documents.get", {"id": "doc_bob"}))["document"]
        assert untouched["category"] == "Fuel"
