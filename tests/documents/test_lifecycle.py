"""documents.get / update / delete / unarchive through REST."""

from __future__ import annotations

import httpx

from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result


async def test_get_returns_every_field(client: httpx.AsyncClient, seeded: Tenant) -> None:
    document = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert document["merchant"] == "Starbucks" and document["amount"] == 4.1
    assert document["lineItems"][0]["description"] == "Caffe Latte"
    assert document["source"] == "upload" and document["archived"] is False
    assert document["docDate"] == "2024-01-05" and document["editHistory"] == []
    assert document["createdAt"].endswith("Z")


async def test_unknown_and_foreign_ids_are_404(
    client: httpx.AsyncClient, seeded: Tenant, bob: Tenant
) -> None:
    for slug in ("documents.get", "documents.delete", "documents.unarchive"):
        assert (await call(client, seeded, slug, {"id": "doc_nope"})).status_code == 404
        response = await call(client, bob, slug, {"id": "doc_a"})
        assert response.status_code == 404, slug
        assert response.json()["error"]["errorMessage"] == "Document 'doc_a' not found"
    assert (
        await call(client, bob, "documents.update", {"id": "doc_a", "merchant": "Evil"})
    ).status_code == 404
    still = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert still["merchant"] == "Starbucks"


async def test_update_records_history_and_reindexes(
    client: httpx.AsyncClient, seeded: Tenant
) -> None:
    response = await call(
        client,
        seeded,
        "documents.update",
        {
            "id": "doc_b",
            "merchant": "Shell Express",
            "amount": 61.5,
            "summary": None,
            "docDate": "2024-01-21",
            "currency": "usd",
        },
    )
    document = result(response)["document"]
    assert document["merchant"] == "Shell Express" and document["amount"] == 61.5
    assert document["currency"] == "USD" and document["docDate"] == "2024-01-21"
    history = {entry["field"]: entry for entry in document["editHistory"]}
    assert set(history) == {"merchant", "amount", "docDate", "currency"}  # summary was already null
    assert history["amount"]["oldValue"] == 60.2 and history["amount"]["newValue"] == 61.5
    assert history["merchant"]["editedBy"] == seeded.user_id
    found = result(await call(client, seeded, "documents.search", {"query": "express"}))
    assert [d["id"] for d in found["documents"]] == ["doc_b"]


async def test_update_validation(client: httpx.AsyncClient, seeded: Tenant) -> None:
    cases = {
        "amount": (
            {"id": "doc_a", "amount": 1.234},
            "amount: Decimal input should have no more than 2 decimal places",
        ),
        "docType": (
            {"id": "doc_a", "docType": "memo"},
            "docType: Input should be 'receipt', 'invoice', 'refund', 'credit-note' or 'other'",
        ),
        "fileName": ({"id": "doc_a", "file": {"fileName": "x"}}, "file: unknown property"),
        "status": (
            {"id": "doc_a", "processingStatus": "processed"},
            "processingStatus: unknown property",
        ),
        "nothing": ({"id": "doc_a"}, "no fields to update"),
        "date": ({"id": "doc_a", "docDate": "yesterday"}, "docDate: Input should be a valid date"),
    }
    for name, (body, message) in cases.items():
        response = await call(client, seeded, "documents.update", body)
        assert response.status_code == 400, name
        assert message in response.json()["error"]["errorMessage"], name
    unchanged = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))["document"]
    assert unchanged["editHistory"] == [] and unchanged["amount"] == 4.1


async def test_delete_archives_duplicates_and_cleans_references(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("doc_orig", duplicates=["doc_dup1", "doc_dup2"]),
            doc("doc_dup1", duplicateOf="doc_orig"),
            doc("doc_dup2", duplicateOf="doc_orig"),
            doc("doc_parent", duplicates=["doc_child"]),
            doc("doc_child", duplicateOf="doc_parent", duplicates=[]),
        ],
    )
    deleted = result(await call(client, alice, "documents.delete", {"id": "doc_orig"}))
    assert deleted["document"]["archived"] is True and deleted["document"]["archivedAt"]
    assert sorted(deleted["archivedDuplicates"]) == ["doc_dup1", "doc_dup2"]
    active = result(
        await call(client, alice, "documents.search", {"useSearch": False, "limit": 100})
    )
    assert {d["id"] for d in active["documents"]} == {"doc_parent", "doc_child"}

    # Deleting a duplicate removes it from its original's list.
    result(await call(client, alice, "documents.delete", {"id": "doc_child"}))
    parent = result(await call(client, alice, "documents.get", {"id": "doc_parent"}))["document"]
    assert parent["duplicates"] == []

    # Deleting again changes nothing; unarchive restores and relinks.
    again = result(await call(client, alice, "documents.delete", {"id": "doc_child"}))
    assert again["archivedDuplicates"] == []
    restored = result(await call(client, alice, "documents.unarchive", {"id": "doc_child"}))[
        "document"
    ]
    assert restored["archived"] is False and restored["archivedAt"] is None
    parent = result(await call(client, alice, "documents.get", {"id": "doc_parent"}))["document"]
    assert parent["duplicates"] == ["doc_child"]


async def test_document_link_serves_the_document(
    client: httpx.AsyncClient, seeded: Tenant, bob: Tenant
) -> None:
    document = result(await call(client, seeded, "documents.get", {"id": "doc_a"}))["document"]
    path = document["link"].split("fincap.test", 1)[-1].replace("http://127.0.0.1:8000", "")
    response = await client.get(path, headers=seeded.headers())
    assert result(response)["document"]["id"] == "doc_a"
    assert (await client.get(path, headers=bob.headers())).status_code == 404
    assert (await client.get(path)).status_code == 401
