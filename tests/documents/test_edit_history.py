"""Edit history in its own collection: complete, in order, and never ahead of the document."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from persistence.documents.edits import EditEntry
from persistence.documents.writes import DocumentWrites
from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result


def entry(field: str, new: Any, at: datetime) -> EditEntry:
    return EditEntry(
        field=field, oldValue=None, newValue=new, editedBy="usr_x", editedAt=at, via="test"
    )


async def history_count(store: Store) -> int:
    return int(await store.db["document_edits"].count_documents({}))


async def test_updates_are_listed_oldest_first_after_older_embedded_ones(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    # A document written before the history had its own collection keeps its entries inline.
    legacy = entry("category", "Fuel", datetime(2024, 1, 1, tzinfo=UTC))
    stored = {**DocumentWrites.prepare(alice.org_id, doc("doc_old")), "editHistory": [legacy]}
    await store.db["documents"].insert_one(stored)
    for merchant in ("Shell Oil", "Shell plc"):
        updated = await call(
            client, alice, "documents.update", {"id": "doc_old", "merchant": merchant}
        )
        assert updated.status_code == 200, updated.text
    history = result(await call(client, alice, "documents.get", {"id": "doc_old"}))["document"][
        "editHistory"
    ]
    assert [(e["field"], e["oldValue"], e["newValue"]) for e in history] == [
        ("category", None, "Fuel"),
        ("merchant", "Shell", "Shell Oil"),
        ("merchant", "Shell Oil", "Shell plc"),
    ]
    assert history[1]["editedBy"] == alice.user_id and history[1]["via"] == "documents.update"


async def test_a_failed_document_write_takes_its_history_back(
    store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_1")])
    record = await store.documents.reads.loaded(alice.org_id, "doc_1")
    assert record is not None
    now = datetime(2025, 1, 1, tzinfo=UTC)

    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the write failed")

    monkeypatch.setattr(store.documents.collection.docs, "update_one", broken)
    with pytest.raises(RuntimeError):
        await store.documents.writes.update_fields(
            alice.org_id, record, {"merchant": "X"}, [entry("merchant", "X", now)]
        )
    assert await history_count(store) == 0
    monkeypatch.undo()

    # A document that disappeared meanwhile: no write, so no history either.
    await store.db["documents"].delete_one({"_id": "doc_1"})
    updated = await store.documents.writes.update_fields(
        alice.org_id, record, {"merchant": "X"}, [entry("merchant", "X", now)]
    )
    assert updated is None and await history_count(store) == 0


async def test_history_is_read_only_in_its_workspace(
    client: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_a1")])
    await call(client, alice, "documents.update", {"id": "doc_a1", "summary": "private note"})
    record = await store.documents.reads.document(alice.org_id, "doc_a1")
    assert record is not None
    assert await store.documents.reads.history(bob.org_id, [record]) == {"doc_a1": []}
    assert len((await store.documents.reads.history(alice.org_id, [record]))["doc_a1"]) == 1


async def test_documents_inserted_with_a_history_keep_it_in_the_collection(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    edit = entry("merchant", "Shell", datetime(2024, 2, 1, tzinfo=UTC))
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_imported", editHistory=[edit])]
    )
    stored = await store.db["documents"].find_one({"_id": "doc_imported"})
    assert stored is not None and "editHistory" not in stored
    assert await history_count(store) == 1
    document = result(await call(client, alice, "documents.get", {"id": "doc_imported"}))
    assert [e["newValue"] for e in document["document"]["editHistory"]] == ["Shell"]
