"""The processing pipeline: a received document (its original stored) → a finished document.

Every source ends here. ``receive`` stores the original, the document (``queued``), its activity
item and a durable ``process-document`` job, all or nothing; a worker then runs
``process_document``: the explicit tuple ``STEPS``, each a small step with one contract
(``Step``). A step returns the ``Intake`` with what it learned, or raises ``StopPipeline`` to end
the document as ``skipped`` or ``failed`` with the reason; notes of the steps (a likely
duplicate) make the outcome a ``warning``. Adding a step (embeddings, automation rules) is one
line in ``STEPS``. Every write is keyed by the document id, so a job taken over after a crash
finishes the same document instead of creating another.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from persistence.ids import new_id, utcnow
from persistence.jobs import JobRecord
from resolvers.job_kinds import job_kind
from resolvers.pipeline_contract import Intake, Step, StepContext, StopPipeline
from resolvers.pipeline_steps import (
    Analyze,
    CheckDuplicate,
    ConvertCurrency,
    FlagWeakFields,
    LinkDuplicate,
    LoadPreferences,
    ReadOriginal,
    RequireFinancialDocument,
    SaveFields,
    TakeFields,
)

if TYPE_CHECKING:
    from resolvers.context import Services

log = logging.getLogger("fincap.processing")
PROCESS_DOCUMENT = "process-document"
TERMINAL = frozenset({"processed", "skipped", "failed", "warning"})
# Outcomes that produced a document record: what billing counts as a document processed.
BILLABLE = frozenset({"processed", "warning"})

# The pipeline, in order (ARCHITECTURE.md): a new step is one line here.
STEPS: tuple[Step, ...] = (
    ReadOriginal(),  # the original's bytes from GridFS
    LoadPreferences(),  # preferred currency; the workspace's category corrections
    Analyze(),  # text layer or OCR → fields → category, in the executor
    RequireFinancialDocument(),  # not a receipt or invoice: skipped
    TakeFields(),  # the parsed fields as document fields
    ConvertCurrency(),  # rate to the preferred currency at the document date
    CheckDuplicate(),  # the original this document repeats, if any
    SaveFields(),  # the fields onto the stored document
    LinkDuplicate(),  # a duplicate links to its original: warning
    FlagWeakFields(),  # a missing or weakly read amount or date: warning, saying what to check
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
    """Store a new document from ``source`` and queue its processing; (document id, activity id).

    Nothing remains when a write fails: what was written is removed and the error is raised,
    so the source can safely retry the whole call.
    """
    store = services.store
    document_id = new_id("doc")
    file_ref = await store.files.put(workspace_id, document_id, data, file_name, mime_type)
    try:
        activity = await store.activity.create(
            workspace_id,
            source,
            [document_id],
            {"fileName": file_name, "mimeType": mime_type, "size": len(data), **details},
        )
        await store.documents.insert_many(
            workspace_id,
            [
                {
                    "_id": document_id,
                    "file": file_ref,
                    "source": source,
                    "receivedAt": utcnow(),
                    "processingStatus": "queued",
                    "activityId": activity["_id"],
                }
            ],
        )
        await store.jobs.enqueue(
            workspace_id,
            PROCESS_DOCUMENT,
            # The request id follows the job, so the worker's log lines join the request's.
            {"documentId": document_id, "activityId": activity["_id"], "requestId": request_id},
        )
    except Exception:
        log.exception("receiving a document failed after storing the original; removing it")
        await store.files.delete(file_ref)
        await store.documents.delete_unprocessed(workspace_id, document_id)
        raise
    services.wake_workers()
    return document_id, activity["_id"]


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
    outcome = "warning" if intake.notes else "processed"
    await finish(services, intake, outcome, " ".join([*intake.notes, summary(intake)]))


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
    await services.store.documents.set_processing(workspace_id, document_id, status, reason)
    await services.store.activity.set_status(workspace_id, activity_id, status, reason)
    if status in BILLABLE:
        # Once per document: a job that is run again finds the document finished and returns
        # before reaching here (a crash between these writes loses the count, never doubles it).
        await services.store.usage.add(workspace_id, services.clock().date(), "documentsProcessed")
    log.info("document processed", extra={"documentId": document_id, "status": status})


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
