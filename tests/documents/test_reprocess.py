"""documents.reprocess (issue 41 item 6): a processed upload read again by the current
extraction, on the real protocol with the real analyzer. What the new reading changes is
written with an edit-history entry per field (before and after, via reprocess); a person's
correction is kept unless keepCorrections is false; missing and unready ids are said; another
workspace's ids are missing; nothing but the changed fields moves."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.processing.reprocessing import changes_of
from tests.conftest import Tenant, asgi_client, make_tenant, worker_pool
from tests.sources.conftest import fixture

pytestmark = pytest.mark.wire


@pytest.fixture
async def alice(wire_store: Store) -> Tenant:
    return await make_tenant(wire_store, "alice@example.com", "Alice Co")


@pytest.fixture
async def http(wire_store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(wire_store, registry) as client:
        yield client


async def call(http: httpx.AsyncClient, who: Tenant, slug: str, body: dict[str, Any]) -> Any:
    answer = await http.post(f"/v1/capabilities/{slug}", json=body, headers=who.headers())
    assert answer.status_code == 200, answer.text
    return answer.json()["data"]["result"]


async def processed_upload(http: httpx.AsyncClient, store: Store, who: Tenant) -> dict[str, Any]:
    body = {
        "fileName": "invoice.pdf",
        "base64Data": base64.b64encode(fixture("text-layer.pdf")).decode(),
    }
    document_id = (await call(http, who, "files.upload", body))["documentId"]
    assert await worker_pool(store).run_until_idle() == 1
    document = (await call(http, who, "documents.get", {"id": document_id}))["document"]
    assert document["processingStatus"] in ("processed", "warning")
    assert document["merchant"] and document["amount"] is not None
    return dict(document)


async def an_older_reading(store: Store, who: Tenant, document_id: str, **fields: Any) -> None:
    """What an earlier extraction wrote (no edit history: nobody corrected it)."""
    record = await store.documents.reads.loaded(who.org_id, document_id)
    assert record is not None
    await store.documents.writes.update_fields(who.org_id, record, fields)


async def test_a_new_reading_is_written_per_field_and_keeps_a_persons_correction(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant
) -> None:
    read = await processed_upload(http, wire_store, alice)
    document_id = read["id"]
    await an_older_reading(wire_store, alice, document_id, merchant="0LD READ1NG", amount="1.00")
    await call(http, alice, "documents.update", {"id": document_id, "category": "Travel"})
    await call(http, alice, "notes.add", {"documentId": document_id, "text": "keep me"})

    queued = await call(http, alice, "documents.reprocess", {"ids": [document_id, "doc_nope"]})
    assert queued == {"queued": [document_id], "missing": ["doc_nope"], "notReady": []}
    assert await worker_pool(wire_store).run_until_idle() == 1
    after = (await call(http, alice, "documents.get", {"id": document_id}))["document"]
    assert after["merchant"] == read["merchant"] and after["amount"] == read["amount"]
    assert after["category"] == "Travel"  # the person's correction stays theirs
    assert after["processingStatus"] == read["processingStatus"]
    assert read["reprocessedAt"] is None and after["reprocessedAt"] is not None
    reprocessed = {e["field"]: e for e in after["editHistory"] if e["via"] == "reprocess"}
    assert set(reprocessed) == {"merchant", "amount"}
    assert reprocessed["merchant"]["oldValue"] == "0LD READ1NG"
    assert reprocessed["merchant"]["newValue"] == read["merchant"]
    assert reprocessed["merchant"]["editedBy"] == alice.user_id
    notes = await call(http, alice, "notes.list", {"documentId": document_id})
    assert [n["text"] for n in notes["notes"]] == ["keep me"]

    # Read again with nothing new: nothing is written.
    await call(http, alice, "documents.reprocess", {"ids": [document_id]})
    assert await worker_pool(wire_store).run_until_idle() == 1
    again = (await call(http, alice, "documents.get", {"id": document_id}))["document"]
    assert len(again["editHistory"]) == len(after["editHistory"])
    assert again["reprocessedAt"] > after["reprocessedAt"]  # read, all the same

    # keepCorrections false: the new reading replaces the person's correction too.
    body = {"ids": [document_id], "keepCorrections": False}
    await call(http, alice, "documents.reprocess", body)
    assert await worker_pool(wire_store).run_until_idle() == 1
    replaced = (await call(http, alice, "documents.get", {"id": document_id}))["document"]
    assert replaced["category"] == read["category"]


async def test_unready_and_foreign_documents_are_not_queued(
    http: httpx.AsyncClient, wire_store: Store, alice: Tenant
) -> None:
    read = await processed_upload(http, wire_store, alice)
    await wire_store.documents.writes.insert_many(
        alice.org_id, [{"_id": "doc_typed", "merchant": "X"}]
    )
    bob = await make_tenant(wire_store, "bob@example.com", "Bob Ltd")
    theirs = await call(http, bob, "documents.reprocess", {"ids": [read["id"]]})
    assert theirs == {"queued": [], "missing": [read["id"]], "notReady": []}
    mine = await call(http, alice, "documents.reprocess", {"ids": ["doc_typed"]})
    assert mine == {"queued": [], "missing": [], "notReady": ["doc_typed"]}
    assert await wire_store.db["jobs"].count_documents({"kind": "reprocess-document"}) == 0


def test_a_field_the_new_reading_misses_keeps_its_value() -> None:
    current = {"merchant": "Shell", "amount": 10, "evidence": [{"field": "amount"}]}
    fresh = {"merchant": None, "amount": 12, "evidence": [{"field": "amount", "box": [0, 0, 1, 1]}]}
    changed, edits = changes_of(current, fresh, set(), "usr_1", at=None)  # type: ignore[arg-type]
    assert changed == {"amount": 12, "evidence": fresh["evidence"]}
    assert [(e["field"], e["oldValue"], e["newValue"]) for e in edits] == [("amount", 10, 12)]
    kept, _ = changes_of(current, fresh, {"amount"}, "usr_1", at=None)  # type: ignore[arg-type]
    assert kept == {}  # a kept field keeps its evidence too
