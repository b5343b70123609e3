"""The processing pipeline: a received document (its original stored) → a finished document.

Every source ends here. ``receive`` stores the original, the document (``queued``), its activity
item and a durable ``process-document`` job, all or nothing, each write journaled (what a sender
was told "accepted" is on disk); a worker then runs
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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from persistence.activity import TERMINAL
from persistence.documents.records import StoredFile
from persistence.ids import new_id, utcnow
from persistence.jobs import JobRecord
from resolvers.framework.job_kinds import job_kind
from resolvers.services.pipeline_contract import Intake, Step, StepContext, StopPipeline
from resolvers.services.pipeline_steps import (
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
    from resolvers.services.container import Services

log = logging.getLogger("fincap.processing")
PROCESS_DOCUMENT = "process-document"
# Handled by the source that asked for it (``details.notify`` on the activity item).
NOTIFY_SOURCE = "notify-source"
# Outcomes that produced a document record: what billing counts as a document processed.
BILLABLE = frozenset({"processed", "warning"})

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


@dataclass(frozen=True)
class Original:
    """One file a source hands to the pipeline (an attachment, a photo, a message's text)."""

    data: bytes
    file_name: str
    mime_type: str
    fields: Mapping[str, Any] = field(default_factory=dict)  # known up front (fromEmail, …)


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
    """Store a new document from ``source`` and queue its processing; (document id, activity id).

    Nothing remains when a write fails: what was written is removed and the error is raised,
    so the source can safely retry the whole call.
    """
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
) -> tuple[str, list[str]]:
    """Ingest one incoming item (an upload, an email, a WhatsApp message): its activity item and
    one queued document (original in GridFS, durable job) per original; (activity id, document
    ids). All or nothing: when a write fails, what was written is removed and the error raised.
    With ``activity_id`` the item exists already (a message whose media arrived later).

    The writes are journaled and ordered for a crash between two of them: originals, documents, then
    the activity item (what a sender's retry is recognised by), then the jobs. Killed before the
    item, nothing was acknowledged and a retry is taken afresh (the start-up check,
    ``resolvers.services.recovery``, removes the documents left behind); killed after it, the
    documents exist, and the start-up check queues the job any of them lacks.

    Refused first (``InsufficientStorage``, nothing written) when the store's disk would keep
    less than its floor (``resolvers.services.disk_space``)."""
    await services.disk.require_room(sum(len(original.data) for original in originals))
    store = services.store
    document_ids = [new_id("doc") for _ in originals]
    stored: list[tuple[str, StoredFile]] = []
    created_activity = False
    new_activity_id = activity_id or new_id("act")
    try:
        for document_id, original in zip(document_ids, originals, strict=True):
            stored.append(
                (
                    document_id,
                    await store.files.put(
                        workspace_id,
                        document_id,
                        original.data,
                        original.file_name,
                        original.mime_type,
                    ),
                )
            )
        now = utcnow()
        await store.documents.insert_many(
            workspace_id,
            [
                {
                    **original.fields,
                    "_id": document_id,
                    "file": file_ref,
                    "source": source,
                    "receivedAt": now,
                    "intakeOrder": order,
                    "processingStatus": "queued",
                    "activityId": new_activity_id,
                }
                for order, ((document_id, file_ref), original) in enumerate(
                    zip(stored, originals, strict=True)
                )
            ],
        )
        if activity_id is None:
            await store.activity.create(
                workspace_id,
                source,
                document_ids,
                dict(details),
                message_id=message_id,
                activity_id=new_activity_id,
            )
            created_activity = True
        else:
            await store.activity.attach_documents(workspace_id, activity_id, document_ids)
        if len(originals) > 1:
            await store.activity.set_document_names(
                workspace_id,
                new_activity_id,
                {doc: o.file_name for doc, o in zip(document_ids, originals, strict=True)},
            )
        for document_id in document_ids:
            await enqueue_processing(
                services, workspace_id, document_id, new_activity_id, request_id
            )
    except Exception:
        log.exception("receiving an item failed part-way; removing what was stored")
        for document_id, file_ref in stored:
            await store.files.delete(file_ref)
            await store.documents.delete_unprocessed(workspace_id, document_id)
        if created_activity:
            await store.activity.delete(workspace_id, new_activity_id)
        raise
    services.wake_workers()
    return new_activity_id, document_ids


async def enqueue_processing(
    services: Services, workspace_id: str, document_id: str, activity_id: str, request_id: str = ""
) -> None:
    """Queue the ``process-document`` job of a received document (one at a time per document:
    asking again while one is queued or running changes nothing)."""
    await services.store.jobs.enqueue(
        workspace_id,
        PROCESS_DOCUMENT,
        # The request id follows the job, so the worker's log lines join the request's.
        {"documentId": document_id, "activityId": activity_id, "requestId": request_id},
        dedupe_key=f"{PROCESS_DOCUMENT}:{document_id}",
    )


async def process_document(
    services: Services, workspace_id: str, document_id: str, activity_id: str
) -> None:
    """Run the pipeline over one received document; raises to have its job retried."""
    store = services.store
    record = await store.documents.get(workspace_id, document_id)
    if record is None or record.get("processingStatus") in TERMINAL:
        return  # deleted meanwhile, or finished by a worker that died before completing the job
    await store.documents.set_processing(workspace_id, document_id, "processing")
    await store.activity.set_status(workspace_id, activity_id, "processing", "Reading the document")
    activity = await store.activity.get(workspace_id, activity_id) or {}
    intake = Intake(
        workspace_id=workspace_id,
        document_id=document_id,
        activity_id=activity_id,
        record=record,
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
    latest = await services.store.documents.get(intake.workspace_id, intake.document_id)
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
    await store.documents.set_processing(workspace_id, document_id, status, reason)
    settled = await store.activity.record_outcome(
        workspace_id, activity_id, document_id, status, reason
    )
    if status in BILLABLE:
        # Once per document: a job that is run again finds the document finished and returns
        # before reaching here (a crash between these writes loses the count, never doubles it).
        await store.usage.add(workspace_id, services.clock().date(), "documentsProcessed")
    log.info("document processed", extra={"documentId": document_id, "status": status})
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


# "process-upload": the kind's name before every source shared the pipeline.
@job_kind(PROCESS_DOCUMENT, on_give_up=give_up, aliases=("process-upload",))
async def run_process_document(services: Services, job: JobRecord) -> None:
    """A ``process-document`` job: the pipeline over the document its payload names."""
    payload = job["payload"]
    await process_document(
        services, job["workspaceId"], payload["documentId"], payload["activityId"]
    )
