"""Previews of originals: made once in an analysis process, stored, served from storage.

``GET /v1/files/{id}/thumbnail`` (``app/rest/files.py``) calls ``thumbnail_of``, which only reads:
the stored preview (``ready``), or the stored placeholder of an original that has none
(``unavailable``: over the pixel budget, not drawable, not a picture, with the reason). A document
processed before previews were stored has none yet: the first request queues one ``make-thumbnail``
job (a worker reads the original and has the analysis process draw it) and is answered ``pending``
with a placeholder; a document still being processed gets its preview from the pipeline
(``resolvers.services.processing.pipeline``'s ``MakePreview`` step). No image is ever decoded in the
API process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from domain.documents import UNFINISHED
from engines.thumbnail import placeholder
from persistence.documents import StoredFile
from persistence.jobs import JobRecord
from resolvers.framework.context import Context
from resolvers.framework.errors import NotFound
from resolvers.framework.job_kinds import job_kind

if TYPE_CHECKING:
    from resolvers.framework.services import Services

MAKE_THUMBNAIL = "make-thumbnail"


@dataclass(frozen=True)
class ThumbnailAnswer:
    """What the thumbnail route sends: a JPEG, and whether it is the preview."""

    status: Literal["ready", "unavailable", "pending"]
    jpeg: bytes
    etag: str
    reason: str | None = None


async def store_preview(
    services: Services, workspace_id: str, document_id: str, file_ref: StoredFile, data: bytes
) -> None:
    """Have the analysis process draw the preview of ``data`` (the original) and keep it."""
    preview = await services.get_analyzer().preview(data, file_ref["mimeType"])
    await services.store.thumbnails.put(
        workspace_id, document_id, str(file_ref.get("sha256") or ""), preview.jpeg, preview.reason
    )


async def thumbnail_of(ctx: Context, document_id: str) -> ThumbnailAnswer:
    """The stored preview of a document's original, or a placeholder (workspace-scoped)."""
    workspace_id = ctx.require_workspace()
    record = await ctx.store.documents.reads.get(workspace_id, document_id)
    if record is None or not isinstance(record.get("file"), dict):
        raise NotFound(f"No original file for document '{document_id}'")
    sha256 = str(record["file"].get("sha256") or "")
    stored = await ctx.store.thumbnails.get(workspace_id, document_id)
    if stored is not None and stored["sha256"] == sha256:
        return ThumbnailAnswer(stored["status"], stored["jpeg"], sha256, stored["reason"])
    if record.get("processingStatus") not in UNFINISHED:
        # Older than stored previews: one job makes it (asking again adds none).
        await ctx.store.jobs.enqueue(
            workspace_id,
            MAKE_THUMBNAIL,
            {"documentId": document_id, "requestId": ctx.request_id},
            dedupe_key=f"{MAKE_THUMBNAIL}:{document_id}",
        )
        ctx.services.wake_workers()
    return ThumbnailAnswer(
        "pending",
        placeholder("Preparing preview", "The preview is being made; look again in a moment."),
        sha256,
        "the preview is being made",
    )


@job_kind(MAKE_THUMBNAIL)
async def make_thumbnail(services: Services, job: JobRecord) -> None:
    """A ``make-thumbnail`` job: the preview of a document that has none stored yet."""
    workspace_id, document_id = job["workspaceId"], job["payload"]["documentId"]
    store = services.store
    record = await store.documents.reads.get(workspace_id, document_id)
    if record is None or not isinstance(record.get("file"), dict):
        return  # deleted meanwhile
    file_ref: StoredFile = record["file"]
    stored = await store.thumbnails.get(workspace_id, document_id)
    if stored is not None and stored["sha256"] == file_ref.get("sha256"):
        return  # made meanwhile (by the pipeline, or an earlier attempt)
    try:
        data = await store.files.read(workspace_id, file_ref)
    except FileNotFoundError:
        return
    await store_preview(services, workspace_id, document_id, file_ref, data)
