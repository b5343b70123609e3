"""The review queue (issue 41): ``needsReview`` is stored on each document and kept by the
writes that change what it depends on (``domain.review``); ``documents.review`` accepts a
document as it is or with corrections, records who and when, and it stays accepted until a
new reason appears."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import httpx
import pytest

from app.host.config import Settings
from app.host.services import build_services
from persistence.documents.writes import REVIEW_MIGRATION
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.processing import pipeline
from resolvers.services.processing.pipeline import process_document
from resolvers.services.processing.pipeline_contract import Intake, StepContext
from tests.conftest import Tenant, asgi_client, make_tenant
from tests.documents.conftest import call, doc, result

WEAK_AMOUNT = [{"field": "amount", "confidence": 0.42, "text": "1O.00", "source": "amount"}]
QUEUE = {"where": {"conditions": [{"field": "needsReview", "op": "eq", "value": True}]}}


async def get(client: httpx.AsyncClient, tenant: Tenant, doc_id: str) -> dict[str, Any]:
    found = result(await call(client, tenant, "documents.get", {"id": doc_id}))
    return found["document"]  # type: ignore[no-any-return]


async def queue(client: httpx.AsyncClient, tenant: Tenant) -> list[str]:
    """The queue as the Review page reads it: oldest first."""
    body = {**QUEUE, "useSearch": False, "sortBy": "createdAt", "sortOrder": 1, "limit": 100}
    page = result(await call(client, tenant, "documents.search", body))
    return [d["id"] for d in page["documents"]]


async def count(client: httpx.AsyncClient, tenant: Tenant) -> int:
    return result(await call(client, tenant, "documents.count", QUEUE))["count"]  # type: ignore[no-any-return]


async def finish(store: Store, tenant: Tenant, doc_id: str, status: str = "processed") -> None:
    await store.documents.writes.set_processing(tenant.org_id, doc_id, status, "done")


async def test_a_weak_field_flags_the_document_when_processing_finishes(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_weak", processingStatus="processing", evidence=WEAK_AMOUNT)]
    )
    assert (await get(client, alice, "doc_weak"))["needsReview"] is False  # not finished yet
    await finish(store, alice, "doc_weak")
    document = await get(client, alice, "doc_weak")
    assert (document["needsReview"], document["reviewReasons"]) == (True, ["flaggedField"])
    # A warning on a field flags it whatever its confidence.
    warned = [{"field": "taxAmount", "confidence": 0.99, "warning": "tax 35.00 is not 6%"}]
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_warned", evidence=warned)])
    assert (await get(client, alice, "doc_warned"))["reviewReasons"] == ["flaggedField"]
    assert await queue(client, alice) == ["doc_weak", "doc_warned"]


class Warn:
    """Notes something to check, as FlagWeakFields does."""

    name: ClassVar[str] = "warn"

    def applies(self, intake: Intake) -> bool:
        return True

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        return dataclasses.replace(
            intake, fields={"merchant": "Probe"}, notes=(*intake.notes, "Please check: date.")
        )


async def test_a_processing_warning_flags_the_document(
    client: httpx.AsyncClient, store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "STEPS", (Warn(),))
    activity = await store.activity.create(alice.org_id, "upload", ["doc_warn"], {})
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_warn", processingStatus="queued")]
    )
    await process_document(build_services(Settings(), store), alice.org_id, "doc_warn", activity)
    document = await get(client, alice, "doc_warn")
    assert document["processingStatus"] == "warning"
    assert (document["needsReview"], document["reviewReasons"]) == (True, ["processingWarning"])


async def test_a_possible_duplicate_and_a_missing_amount_flag_the_document(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_orig"), doc("doc_copy"), doc("doc_blank", amount=None)]
    )
    assert await queue(client, alice) == ["doc_blank"]
    assert (await get(client, alice, "doc_blank"))["reviewReasons"] == ["noAmount"]
    await store.documents.writes.link_duplicate(alice.org_id, "doc_orig", "doc_copy")
    assert (await get(client, alice, "doc_copy"))["reviewReasons"] == ["possibleDuplicate"]
    assert (await get(client, alice, "doc_orig"))["needsReview"] is False
    assert await count(client, alice) == 2
    # The original removed, the copy is no longer a duplicate, and no longer in the queue.
    await store.documents.writes.forget_original(alice.org_id, "doc_orig")
    assert (await get(client, alice, "doc_copy"))["needsReview"] is False
    assert await queue(client, alice) == ["doc_blank"]


async def test_a_clean_or_unfinished_document_is_not_in_the_queue(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id,
        [
            doc("doc_clean", evidence=[{"field": "amount", "confidence": 0.97}]),
            doc("doc_queued", processingStatus="queued", amount=None),
            doc("doc_skipped", processingStatus="skipped", amount=None),
        ],
    )
    assert await queue(client, alice) == []
    assert await count(client, alice) == 0


async def test_review_accepts_clears_the_flag_and_records_who_and_when(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_1", evidence=WEAK_AMOUNT)])
    assert await count(client, alice) == 1
    reviewed = result(await call(client, alice, "documents.review", {"id": "doc_1"}))["document"]
    assert reviewed["needsReview"] is False
    assert reviewed["reviewedBy"] == alice.user_id and reviewed["reviewedAt"]
    # Accepted as it is: the reasons stay visible, the value unchanged, no edit recorded.
    assert reviewed["reviewReasons"] == ["flaggedField"]
    assert reviewed["amount"] == 10.0 and reviewed["editHistory"] == []
    assert await queue(client, alice) == [] and await count(client, alice) == 0
    assert (await get(client, alice, "doc_1"))["reviewedBy"] == alice.user_id


async def test_a_correction_in_the_review_is_applied_by_documents_update(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_2", amount=None, evidence=WEAK_AMOUNT)]
    )
    body = {"id": "doc_2", "corrections": {"amount": "12.50", "merchant": "Aral"}}
    reviewed = result(await call(client, alice, "documents.review", body))["document"]
    assert (reviewed["amount"], reviewed["merchant"]) == (12.5, "Aral")
    assert reviewed["needsReview"] is False and reviewed["reviewedBy"] == alice.user_id
    # The corrected amount is certain now: no reason is left.
    assert reviewed["reviewReasons"] == []
    edits = {(e["field"], e["newValue"], e["via"]) for e in reviewed["editHistory"]}
    assert {("amount", 12.5, "documents.update"), ("merchant", "Aral", "documents.update")} <= (
        edits
    )
    # A bad correction is refused like documents.update refuses it, and nothing is reviewed.
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_3", amount=None)])
    bad = {"id": "doc_3", "corrections": {"currency": "euro"}}
    refused = await call(client, alice, "documents.review", bad)
    assert refused.status_code == 400 and "corrections.currency" in refused.text, refused.text
    assert (await get(client, alice, "doc_3"))["needsReview"] is True


async def test_a_document_already_reviewed_answers_409_naming_who(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_4", amount=None), doc("doc_5")]
    )
    result(await call(client, alice, "documents.review", {"id": "doc_4"}))
    again = await call(
        client, alice, "documents.review", {"id": "doc_4", "corrections": {"amount": "1.00"}}
    )
    assert again.status_code == 409 and alice.user_id in again.text
    assert (await get(client, alice, "doc_4"))["amount"] is None  # nothing written
    never = await call(client, alice, "documents.review", {"id": "doc_5"})
    assert never.status_code == 409 and "nothing to check" in never.text


async def test_it_stays_cleared_until_something_new_needs_review(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    await store.documents.writes.insert_many(
        alice.org_id, [doc("doc_orig"), doc("doc_6", evidence=WEAK_AMOUNT)]
    )
    result(await call(client, alice, "documents.review", {"id": "doc_6"}))
    # A correction that adds no reason leaves it accepted.
    result(await call(client, alice, "documents.update", {"id": "doc_6", "merchant": "Esso"}))
    assert (await get(client, alice, "doc_6"))["needsReview"] is False
    # A reason it did not have when accepted brings it back.
    await store.documents.writes.link_duplicate(alice.org_id, "doc_orig", "doc_6")
    document = await get(client, alice, "doc_6")
    assert document["needsReview"] is True
    assert document["reviewReasons"] == ["flaggedField", "possibleDuplicate"]
    result(await call(client, alice, "documents.review", {"id": "doc_6"}))
    # Processing finishing again (a reprocess with a warning) asks for every reason again.
    await finish(store, alice, "doc_6", "warning")
    document = await get(client, alice, "doc_6")
    assert document["needsReview"] is True
    assert document["reviewReasons"] == ["flaggedField", "processingWarning", "possibleDuplicate"]


async def test_review_is_scoped_to_the_workspace(
    client: httpx.AsyncClient, store: Store, alice: Tenant, bob: Tenant
) -> None:
    await store.documents.writes.insert_many(alice.org_id, [doc("doc_7", amount=None)])
    foreign = await call(client, bob, "documents.review", {"id": "doc_7"})
    assert foreign.status_code == 404
    assert (await get(client, alice, "doc_7"))["needsReview"] is True
    assert await count(client, bob) == 0


async def test_documents_stored_before_the_queue_get_their_flags_once(
    store: Store, alice: Tenant
) -> None:
    # A database of an earlier release: no marker yet (the fixture's start-up set one).
    await store.db["document_migrations"].delete_many({})
    raw = store.db["documents"]
    for doc_id, amount in (("doc_old_blank", None), ("doc_old_fine", 500)):
        await raw.insert_one(
            {
                "_id": doc_id,
                "workspaceId": alice.org_id,
                "processingStatus": "processed",
                "amount": amount,
                "archived": False,
            }
        )
    assert await store.documents.writes.migrate_review() == 2
    blank = await store.documents.reads.get(alice.org_id, "doc_old_blank")
    fine = await store.documents.reads.get(alice.org_id, "doc_old_fine")
    assert blank is not None and (blank["needsReview"], blank["reviewReasons"]) == (
        True,
        ["noAmount"],
    )
    assert fine is not None and fine["needsReview"] is False
    assert await store.db["document_migrations"].find_one({"_id": REVIEW_MIGRATION})
    # Once: a later start-up leaves documents alone.
    await raw.update_one({"_id": "doc_old_fine"}, {"$unset": {"needsReview": ""}})
    assert await store.documents.writes.migrate_review() == 0


@pytest.mark.wire
async def test_the_queue_over_the_wire(wire_store: Store, registry: Registry) -> None:
    """On the embedded MongoDB server: the queue read, a review guarded by the reasons it
    accepts (an array compared whole), a second review refused, the start-up migration."""
    alice = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    await wire_store.documents.writes.insert_many(
        alice.org_id,
        [doc("doc_w1", amount=None, evidence=WEAK_AMOUNT), doc("doc_w2"), doc("doc_w3")],
    )
    await wire_store.documents.writes.link_duplicate(alice.org_id, "doc_w2", "doc_w3")
    async with asgi_client(wire_store, registry) as http:
        assert await queue(http, alice) == ["doc_w1", "doc_w3"]
        assert await count(http, alice) == 2
        reviewed = result(await call(http, alice, "documents.review", {"id": "doc_w1"}))
        assert reviewed["document"]["reviewReasons"] == ["flaggedField", "noAmount"]
        assert reviewed["document"]["needsReview"] is False
        again = await call(http, alice, "documents.review", {"id": "doc_w1"})
        assert again.status_code == 409
        body = {"id": "doc_w3", "corrections": {"merchant": "Aral"}}
        assert result(await call(http, alice, "documents.review", body))["document"][
            "merchant"
        ] == ("Aral")
        assert await queue(http, alice) == [] and await count(http, alice) == 0
    await wire_store.db["document_migrations"].delete_many({})
    await wire_store.db["documents"].update_many(
        {"workspaceId": alice.org_id}, {"$unset": {"needsReview": "", "reviewReasons": ""}}
    )
    assert await wire_store.documents.writes.migrate_review() == 3
    found = await wire_store.documents.reads.get(alice.org_id, "doc_w1")
    # Accepted before: the migration computes from the accepted reasons too.
    assert found is not None and found["needsReview"] is False
