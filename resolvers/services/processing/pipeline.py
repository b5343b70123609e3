"""The processing pipeline: a received document (its original stored) → a finished document.

Every source ends here. ``receive`` takes in the original, the document (``queued``), its activity
item and a durable ``process-document`` job, appearing together or not at all, each write
journaled (``resolvers.services.processing.intake``: what a sender was told "accepted" is on disk);
a worker then runs
``process_document``: the explicit tuple ``STEPS``, each a small step with one contract
(``Step``). A step returns the ``Intake`` with what it learned, or raises ``StopPipeline`` to end
the document as ``skipped`` or ``failed`` with the reason; notes of the steps (a likely
duplicate) make the outcome a ``warning``. Adding a step (embeddings, automation rules) is one
line in ``STEPS``. Every write is keyed by the document id, so a job taken over after a crash
finishes the same document instead of creating another.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from domain.documents import SAVED, TERMINAL
from persistence.jobs import JobRecord
from resolvers.framework.job_kinds import job_kind
from resolvers.services.processing.intake import Original, take_in
from resolvers.services.processing.pipeline_contract import Intake, Step, StepContext, StopPipeline
from resolvers.services.processing.pipeline_steps import (
    Analyze,
    ApplyRules,
    CheckDuplicate,
    ConvertCurrency,
    Embed,
    FlagWeakFields,
    LinkDuplicate,
    LoadPreferences,
    MakePreview,
    ReadOriginal,
    RequireFinancialDocument,
    SaveFields,
    TakeFields,
)

if TYPE_CHECKING:
    from resolvers.framework.services import Services

log = logging.getLogger("fincap.processing")
PROCESS_DOCUMENT = "process-document"
# Handled by the source that asked for it (``details.notify`` on the activity item).
NOTIFY_SOURCE = "notify-source"
# Outcomes that produced a document record: what billing counts as a document processed.

# The pipeline, in order (docs/guide/uploads.md): a new step is one line here.
STEPS: tuple[Step, ...] = (
    ReadOriginal(),  # the original's bytes from GridFS
    MakePreview(),  # its thumbnail, drawn in the analysis process and stored
    LoadPreferences(),  # preferred currency; the workspace's category corrections
    Analyze(),  # text layer or OCR → fields → category, in the executor
    RequireFinancialDocument(),  # not a receipt or invoice: skipped
    TakeFields(),  # the parsed fields as document fields
    ConvertCurrency(),  # rate to the preferred currency at the document date
    Embed(),  # the embedding of merchant, category, summary, line items, place
    SaveFields(),  # the fields onto the stored document
    # After saving: of two documents processed at once, the second to look sees the first.
    CheckDuplicate(),  # the original this document repeats (the earlier arrival), if any
    LinkDuplicate(),  # a duplicate links to its original: warning
    FlagWeakFields(),  # a missing or weakly read amount or date: warning, saying what to check
    ApplyRules(),  # the workspace's document-processed automation rules, after categorization
)


async def receive(
    services: Services,
    workspace_id: str,
    *,
    data: bytes,
    file_name: str,
    mime_type: str,
    source: str,
    details: Mapping[str, Any],
    request_id: str = "",
) -> tuple[str, str]:
    """Take in a new document from ``source`` and queue its processing; (document id, activity
    id). All or nothing (``resolvers.services.processing.intake``): when a write fails, nothing of
    it is readable, and the source can retry the whole call."""
    activity_id, document_ids = await receive_item(
        services,
        workspace_id,
        source=source,
        originals=[Original(data, file_name, mime_type)],
        details={"fileName": file_name, "mimeType": mime_type, "size": len(data), **details},
        request_id=request_id,
    )
    return document_ids[0], activity_id


async def receive_item(
    services: Services,
    workspace_id: str,
    *,
    source: str,
    originals: Sequence[Original],
    details: Mapping[str, Any],
    message_id: str | None = None,
    request_id: str = "",
    activity_id: str | None = None,
    status: str = "queued",
    reasoning: str = "Received; waiting for processing",
    jobs: Sequence[Mapping[str, Any]] = (),
) -> tuple[str, list[str]]:
    """Take in one incoming item (an upload, an email, a WhatsApp message): its activity item
    and one queued document per original, each with its ``process-document`` job (and
    ``jobs``, more of the unit's jobs, each given the item's id as ``activityId`` in its
    payload), all appearing together or not at all
    (``resolvers.services.processing.intake.take_in``, which says what it raises); (activity id,
    document ids). With ``activity_id`` the documents join an item that exists (a message whose
    media arrived later); with ``message_id`` the message is taken once per workspace and source.

    Refused first (``InsufficientStorage``, nothing written) when the store's disk would keep
    less than its floor (``resolvers.services.processing.disk_space``)."""

    def unit_jobs(unit_activity_id: str, document_ids: Sequence[str]) -> list[dict[str, Any]]:
        return [
            processing_job(document_id, unit_activity_id, request_id)
            for document_id in document_ids
        ] + [{**job, "payload": {**job["payload"], "activityId": unit_activity_id}} for job in jobs]

    await services.disk.require_room(sum(len(original.data) for original in originals))
    return await take_in(
        services,
        workspace_id,
        source=source,
        originals=originals,
        details=details,
        jobs=unit_jobs,
        message_id=message_id,
        activity_id=activity_id,
        status=status,
        reasoning=reasoning,
    )


def processing_job(document_id: str, activity_id: str, request_id: str = "") -> dict[str, Any]:
    """The ``process-document`` job of a received document, as an intake queues it."""
    return {
        "kind": PROCESS_DOCUMENT,
        # The request id follows the job, so the worker's log lines join the request's.
        "payload": {"documentId": document_id, "activityId": activity_id, "requestId": request_id},
        # One at a time per document: asking again while one is queued or running changes nothing.
        "dedupeKey": f"{PROCESS_DOCUMENT}:{document_id}",
    }


async def enqueue_processing(
    services: Services, workspace_id: str, document_id: str, activity_id: str, request_id: str = ""
) -> None:
    """Queue the ``process-document`` job of a received document (one at a time per document:
    asking again while one is queued or running changes nothing)."""
    job = processing_job(document_id, activity_id, request_id)
    await services.store.jobs.enqueue(
        workspace_id, job["kind"], job["payload"], dedupe_key=job["dedupeKey"]
    )


async def process_document(
    services: Services, workspace_id: str, document_id: str, activity_id: str
) -> None:
    """Run the pipeline over one received document; raises to have its job retried."""
    store = services.store
    loaded = await store.documents.reads.loaded(workspace_id, document_id)
    if loaded is None:
        return  # deleted meanwhile
    status = loaded.document.get("processingStatus")
    if status in TERMINAL:
        # Finished by a worker that died before it completed the job: what came after the
        # outcome (its item's record, then the sender's notice) is done now, once; the billed
        # count came with the outcome itself.
        item = await store.activity.get(workspace_id, activity_id)
        if item is not None and document_id not in (item.get("outcomes") or {}):
            reason = str(loaded.document.get("processingReason") or "")
            await record_outcome(
                services, workspace_id, document_id, activity_id, str(status), reason
            )
        return
    await store.documents.writes.set_processing(workspace_id, document_id, "processing")
    await store.activity.set_status(workspace_id, activity_id, "processing", "Reading the document")
    activity = await store.activity.get(workspace_id, activity_id) or {}
    intake = Intake(
        workspace_id=workspace_id,
        document_id=document_id,
        activity_id=activity_id,
        loaded=loaded,
        received_by=(activity.get("details") or {}).get("uploadedBy"),
    )
    ctx = StepContext(services=services, today=datetime.now(UTC).date())
    try:
        for step in STEPS:
            if step.applies(intake):
                intake = await step.run(intake, ctx)
    except StopPipeline as stop:
        await finish(services, intake, stop.status, stop.reason)
        return
    intake = await note_adoption(services, intake)
    outcome = "warning" if intake.notes else "processed"
    reason = " ".join([*intake.notes, summary(intake), *intake.events])
    await finish(services, intake, outcome, reason)


async def note_adoption(services: Services, intake: Intake) -> Intake:
    """An earlier arrival processed at the same time may have claimed this document as its
    duplicate meanwhile (``pipeline_steps.adopt_later_copy``): the outcome says so."""
    if intake.duplicate is not None or not intake.fields:
        return intake
    latest = await services.store.documents.reads.get(intake.workspace_id, intake.document_id)
    original_id = (latest or {}).get("duplicateOf")
    if not original_id:
        return intake
    note = f"Possible duplicate of {original_id}: it arrived earlier with the same content."
    return dataclasses.replace(intake, duplicate=(original_id, note), notes=(*intake.notes, note))


def summary(intake: Intake) -> str:
    """What was read, in one sentence, for the activity item and the document."""
    fields, analysis = intake.fields, intake.analysis
    how = ""
    if analysis is not None:
        how = f"; read with {analysis.engine}" + (
            " (OCR)" if analysis.ocr_used else " (text layer)"
        )
    amount = fields.get("amount")
    return (
        f"Extracted {fields.get('merchant') or 'unknown merchant'}, "
        f"{amount if amount is not None else 'no total'} "
        f"{fields.get('currency') or ''}, {fields.get('docDate') or 'no date'}; "
        f"category {fields.get('category')}{how}"
    )


async def finish(services: Services, intake: Intake, status: str, reason: str) -> None:
    await set_outcome(
        services, intake.workspace_id, intake.document_id, intake.activity_id, status, reason
    )


async def set_outcome(
    services: Services,
    workspace_id: str,
    document_id: str,
    activity_id: str,
    status: str,
    reason: str,
) -> None:
    store = services.store
    # A billable outcome is its billing count, in the same write (usage counted exactly once:
    # a job run again finds the document finished and returns before reaching here).
    billed_on = services.clock().date() if status in SAVED else None
    await store.documents.writes.set_processing(
        workspace_id, document_id, status, reason, billed_on=billed_on
    )
    log.info("document processed", extra={"documentId": document_id, "status": status})
    await record_outcome(services, workspace_id, document_id, activity_id, status, reason)


async def record_outcome(
    services: Services,
    workspace_id: str,
    document_id: str,
    activity_id: str,
    status: str,
    reason: str,
) -> None:
    """The document's outcome on its activity item, and the source's notice once the item is
    settled; both idempotent (a job run again after a crash repeats them)."""
    store = services.store
    settled = await store.activity.record_outcome(
        workspace_id, activity_id, document_id, status, reason
    )
    if settled is not None and (settled.get("details") or {}).get("notify"):
        # The source wants to tell the sender what came of it (a WhatsApp reply): durable, once.
        await store.jobs.enqueue(
            workspace_id,
            NOTIFY_SOURCE,
            {"activityId": activity_id},
            dedupe_key=f"notify:{activity_id}",
        )
        services.wake_workers()


async def give_up(services: Services, job: JobRecord, error: str) -> None:
    """After the last attempt: the document and its activity item are marked failed."""
    payload = job["payload"]
    await set_outcome(
        services,
        job["workspaceId"],
        payload["documentId"],
        payload["activityId"],
        "failed",
        f"Processing failed after {job['attempts']} attempts: {error}",
    )


# "process-upload": the kind's name before every source shared the pipeline. A document whose
# reading ran past the time limit fails at once, like one over a budget: it would again.
@job_kind(
    PROCESS_DOCUMENT,
    on_give_up=give_up,
    aliases=("process-upload",),
    retry_after_time_limit=False,
)
async def run_process_document(services: Services, job: JobRecord) -> None:
    """A ``process-document`` job: the pipeline over the document its payload names."""
    payload = job["payload"]
    await process_document(
        services, job["workspaceId"], payload["documentId"], payload["activityId"]
    )
