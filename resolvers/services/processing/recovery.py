"""What a process checks as it starts: nothing acknowledged is left without a way to finish.

A process killed mid-work (``kill -9``, a power cut, the OOM killer) can leave four things
behind, and each is put right here before its workers start:

- **intakes on their way in** (``resolvers.services.processing.intake.sweep``): a committed one is
  written out whole, a half-written one rolled back (its originals removed). Every worker process
  runs this again every few seconds (``sweep``), for what processes on other hosts leave;
- **jobs leased by a process that is gone**: on this host, a lease owner whose process no longer
  runs (``persistence.lease_owners``) gets its jobs back in the queue at once, in their place
  (they keep their turn), not after the lease expires;
- **queue hints lost between two writes**: rebuilt from the queued jobs
  (``Jobs.repair_queues``);
- **documents without a job**: a document still ``queued`` or ``processing`` whose activity item
  exists but that no queued or running job will process gets its ``process-document`` job
  (queued once: the job's dedupe key). A document without an activity item can only come from
  a version before intakes were written whole (``resolvers.services.processing.intake``): its intake
  was never acknowledged, and once older than ``ORPHAN_AGE`` it is removed with its original, and
  a document marked a duplicate of it is no longer (no ``duplicateOf`` names a removed id).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from persistence.jobs import owner_gone
from resolvers.services.processing.intake import sweep as sweep_intakes
from resolvers.services.processing.pipeline import PROCESS_DOCUMENT, enqueue_processing

if TYPE_CHECKING:
    from resolvers.framework.services import Services

log = logging.getLogger("fincap.recovery")
# An intake writes its documents and then its activity item within a second: a document this old
# without one was left by a process killed in between.
ORPHAN_AGE = timedelta(minutes=10)
# Every name the document-processing job has had (``resolvers.services.processing.pipeline``).
PROCESSING_KINDS = (PROCESS_DOCUMENT, "process-upload")


@dataclass(frozen=True)
class Recovered:
    """What the start-up check put right."""

    leases_taken_back: int = 0
    documents_requeued: int = 0
    orphans_removed: int = 0
    intakes_written: int = 0
    intakes_rolled_back: int = 0


async def recover_at_start_up(services: Services) -> Recovered:
    """Settle intakes left on their way in, take back dead processes' leases, repair queue
    hints, and give every unfinished document a job."""
    store = services.store
    swept = await sweep_intakes(services)
    taken = await store.jobs.take_back_leases(owner_gone)
    await store.jobs.repair_queues()
    requeued, removed = await requeue_unfinished_documents(services)
    recovered = Recovered(taken, requeued, removed, swept.written, swept.rolled_back)
    if taken or requeued or removed:
        log.warning(
            "recovered work left by a stopped process",
            extra={
                "leasesTakenBack": taken,
                "documentsRequeued": requeued,
                "orphansRemoved": removed,
            },
        )
        services.wake_workers()
    return recovered


async def sweep(services: Services) -> None:
    """What every worker process repeats while it runs (``app.host.workers``): intakes whose writers
    died are settled, and jobs leased by processes of this host that are gone go back in their
    place (not waiting for their leases to expire)."""
    await sweep_intakes(services)
    if await services.store.jobs.take_back_leases(owner_gone):
        services.wake_workers()


async def requeue_unfinished_documents(services: Services) -> tuple[int, int]:
    """(documents given a job, orphans removed)."""
    store = services.store
    unfinished = await store.documents.reads.unfinished()
    if not unfinished:
        return 0, 0
    on_their_way = await store.jobs.live_payload_values(PROCESSING_KINDS, "documentId")
    now = store.jobs.now()
    requeued = removed = 0
    for record in unfinished:
        document_id, workspace_id = record["_id"], record["workspaceId"]
        if document_id in on_their_way:
            continue
        activity_id = record.get("activityId")
        item = await store.activity.get(workspace_id, activity_id) if activity_id else None
        if item is not None:
            await enqueue_processing(services, workspace_id, document_id, item["_id"])
            requeued += 1
        elif record.get("processingStatus") == "queued" and _older_than(record, now, ORPHAN_AGE):
            full = await store.documents.reads.get(workspace_id, document_id)
            if full is not None and isinstance(full.get("file"), dict):
                await store.files.delete(full["file"])
            await store.documents.writes.delete_unprocessed(workspace_id, document_id)
            # A later copy marked its duplicate is no longer one of a removed document.
            await store.documents.writes.forget_original(workspace_id, document_id)
            removed += 1
    return requeued, removed


def _older_than(record: Mapping[str, Any], now: datetime, age: timedelta) -> bool:
    created = record.get("createdAt")
    return isinstance(created, datetime) and now - created > age


__all__ = ["Recovered", "recover_at_start_up", "requeue_unfinished_documents", "sweep"]
