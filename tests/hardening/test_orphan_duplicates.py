"""The start-up check's orphan removal leaves no ``duplicateOf`` dangling (issue 35, F1): a
document without an activity item (left by a version before intakes were written whole) is
removed once old enough, and a later copy marked its duplicate is no longer marked."""

from __future__ import annotations

from persistence.store import Store
from resolvers.services.processing.recovery import ORPHAN_AGE, requeue_unfinished_documents
from tests.clock import ManualClock
from tests.conftest import worker_pool


async def test_removing_an_orphan_unmarks_its_duplicates(store: Store) -> None:
    workspace = "org_a"
    await store.documents.writes.insert_many(
        workspace,
        [
            # Half of an intake that never got its item: nothing was acknowledged.
            {"_id": "doc_orphan", "activityId": "act_never_written", "processingStatus": "queued"},
            # The sender's resend, whole and processed, marked a duplicate of the orphan.
            {"_id": "doc_resent", "processingStatus": "processed", "duplicateOf": "doc_orphan"},
        ],
    )
    clock = ManualClock()
    clock.advance(ORPHAN_AGE.total_seconds() + 60)
    services = worker_pool(Store(store.db, clock)).services
    assert await requeue_unfinished_documents(services) == (0, 1)
    assert await store.documents.reads.get(workspace, "doc_orphan") is None
    resent = await store.documents.reads.get(workspace, "doc_resent")
    assert resent is not None and resent.get("duplicateOf") is None
