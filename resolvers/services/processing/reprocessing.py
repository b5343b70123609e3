"""Reprocessing: a document read again by the current extraction (Paperless-ngx's "reprocess").

``documents.reprocess`` queues one ``reprocess-document`` job per document; the job reads the
stored original again through the pipeline's own reading steps (``READ_AGAIN``: the original,
the workspace's preferences, the analysis, the fields, the conversion, the embedding) and writes
what differs as a correction made by ``reprocess``: each changed field is an entry of the
document's edit history, with its value before and after, so what the new extraction changed is
shown per field and can be put back like any correction.

What a person corrected stays theirs: a field with an entry in the edit history made by a person
or a rule (anything but an earlier reprocessing) keeps its value and its evidence, unless the
request says ``keepCorrections: false``. A field the current extraction does not find keeps the
value it has (an empty reading is no reason to lose one). Nothing else of the document moves:
its processing status, duplicates, tags, notes and export state are left as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from domain.documents import TERMINAL
from persistence.ids import utcnow
from persistence.jobs import JobRecord
from resolvers.framework.job_kinds import job_kind
from resolvers.services.documents.document_edits import edit_entries
from resolvers.services.documents.document_views import full_view
from resolvers.services.processing.pipeline_contract import Intake, Step, StepContext, StopPipeline
from resolvers.services.processing.pipeline_steps import (
    Analyze,
    ConvertCurrency,
    Embed,
    LoadPreferences,
    ReadOriginal,
    RequireFinancialDocument,
    TakeFields,
)

if TYPE_CHECKING:
    from resolvers.framework.services import Services

REPROCESS_DOCUMENT = "reprocess-document"
VIA = "reprocess"
# Entries of the edit history that a new reading may replace: only its own. A person's
# correction is theirs, and a rule's change is the workspace's decision (rules are not run
# again: they ran when the document was first processed).
REPLACEABLE_VIAS = frozenset({VIA})
# The pipeline's reading steps, in its order; what comes after reading (saving, duplicates,
# rules, the outcome) is the first processing's and is not done again.
READ_AGAIN: tuple[Step, ...] = (
    ReadOriginal(),
    LoadPreferences(),
    Analyze(),
    RequireFinancialDocument(),
    TakeFields(),
    ConvertCurrency(),
    Embed(),
)
# Written with the fields but not shown as corrections (derived from them).
DERIVED = ("preferredCurrency", "conversionRate")
# Processing statuses whose document has been read once: only those are read again (a queued
# or running document is being read now).
FINISHED = TERMINAL


def reprocess_job(document_id: str, keep_corrections: bool, requested_by: str) -> dict[str, Any]:
    return {
        "documentId": document_id,
        "keepCorrections": keep_corrections,
        "requestedBy": requested_by,
    }


async def queue_reprocessing(
    services: Services,
    workspace_id: str,
    document_ids: Sequence[str],
    keep_corrections: bool,
    requested_by: str,
) -> list[str]:
    """A job per document (one at a time per document: asking again while one waits adds
    none); the ids queued."""
    queued = []
    for document_id in document_ids:
        await services.store.jobs.enqueue(
            workspace_id,
            REPROCESS_DOCUMENT,
            reprocess_job(document_id, keep_corrections, requested_by),
            # A second request with the other choice is not the same request.
            dedupe_key=f"{REPROCESS_DOCUMENT}:{document_id}:{keep_corrections}",
        )
        queued.append(document_id)
    if queued:
        services.wake_workers()
    return queued


async def corrected_fields(
    services: Services, workspace_id: str, document: Mapping[str, Any]
) -> set[str]:
    """The fields a person or a rule changed in ``document`` (API values): an edit-history
    entry not made by reprocessing."""
    history = await services.store.documents.reads.history(workspace_id, [document])
    return {
        entry["field"]
        for entry in history.get(document["id"], [])
        if entry.get("via") not in REPLACEABLE_VIAS
    }


def changes_of(
    current: Mapping[str, Any],
    fresh: Mapping[str, Any],
    kept: set[str],
    by: str,
    at: datetime,
) -> tuple[dict[str, Any], list[Any]]:
    """What the new reading ``fresh`` changes of the document ``current`` (API-level values),
    ``kept`` fields aside; the changed fields and their edit-history entries."""
    readings = {
        name: value
        for name, value in fresh.items()
        if name not in kept and name not in DERIVED and name != "evidence" and value is not None
    }
    edits = edit_entries(current, readings, by=by, via=VIA, at=at)
    changed: dict[str, Any] = {entry["field"]: readings[entry["field"]] for entry in edits}
    if changed:
        for name in DERIVED:
            if fresh.get(name) != current.get(name):
                changed[name] = fresh.get(name)
    old_evidence = list(current.get("evidence") or [])
    evidence = [e for e in old_evidence if e.get("field") in kept] + [
        e for e in fresh.get("evidence") or [] if e.get("field") not in kept
    ]
    if evidence != old_evidence:
        changed["evidence"] = evidence
    return changed, edits


@job_kind(REPROCESS_DOCUMENT)
async def reprocess_document(services: Services, job: JobRecord) -> None:
    """A ``reprocess-document`` job: read the document's original again and write what the
    current extraction reads differently (a file it cannot read, or that is no receipt or
    invoice now, changes nothing)."""
    workspace_id, payload = job["workspaceId"], job["payload"]
    document_id = payload["documentId"]
    store = services.store
    loaded = await store.documents.reads.loaded(workspace_id, document_id)
    if loaded is None or not isinstance(loaded.document.get("file"), dict):
        return  # deleted meanwhile
    intake = Intake(
        workspace_id=workspace_id, document_id=document_id, activity_id="", loaded=loaded
    )
    ctx = StepContext(services=services, today=datetime.now(UTC).date())
    try:
        for step in READ_AGAIN:
            if step.applies(intake):
                intake = await step.run(intake, ctx)
    except (StopPipeline, FileNotFoundError):
        await store.documents.writes.mark_reprocessed(workspace_id, document_id)
        return
    kept = (
        await corrected_fields(services, workspace_id, loaded.document)
        if payload.get("keepCorrections", True)
        else set()
    )
    current = full_view(loaded.document, services.base_url)
    changed, edits = changes_of(current, intake.fields, kept, payload["requestedBy"], utcnow())
    if changed:
        await store.documents.writes.update_fields(
            workspace_id, loaded, changed, edits, vector=intake.vector
        )
    await store.documents.writes.mark_reprocessed(workspace_id, document_id)
