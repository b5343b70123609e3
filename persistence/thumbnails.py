"""Stored previews of originals, one per document, beside the document record.

A preview is made once, in an analysis process, when the document is processed (or, for a
document older than previews, by a ``make-thumbnail`` job) and kept here, so serving one is a
read: ``ready`` with its JPEG (a few tens of KB), or ``unavailable`` with the reason (over the
pixel budget, not drawable, not a picture) and the placeholder that says it. The original's
SHA-256 is kept with it, as the preview's ETag. A small collection rather than GridFS: every
preview fits one record, and reads stay on the ordinary driver path (the in-memory test store
has no GridFS).
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict, cast

from bson import Binary
from motor.motor_asyncio import AsyncIOMotorDatabase

from persistence.ids import utcnow

PreviewStatus = Literal["ready", "unavailable"]


class StoredPreview(TypedDict):
    """One document's preview as stored (``_id`` is the document id)."""

    _id: str
    workspaceId: str
    status: PreviewStatus
    jpeg: bytes  # the preview, or the placeholder saying why there is none
    reason: str | None
    sha256: str


class Thumbnails:
    """The ``thumbnails`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["thumbnails"]

    async def ensure_indexes(self) -> None:
        """Read by ``_id`` (the document id) with the workspace: nothing more to index."""

    async def get(self, workspace_id: str, document_id: str) -> StoredPreview | None:
        row = await self._col.find_one({"_id": document_id, "workspaceId": workspace_id})
        if row is None:
            return None
        return cast(StoredPreview, {**row, "jpeg": bytes(row.get("jpeg") or b"")})

    async def put(
        self, workspace_id: str, document_id: str, sha256: str, jpeg: bytes, reason: str | None
    ) -> None:
        """Keep the preview of a document (``reason``: why ``jpeg`` is a placeholder); made
        again, it replaces the last one."""
        record: dict[str, Any] = {
            "workspaceId": workspace_id,
            "status": "ready" if reason is None else "unavailable",
            "jpeg": Binary(jpeg),
            "reason": reason,
            "sha256": sha256,
            "createdAt": utcnow(),
        }
        await self._col.update_one(
            {"_id": document_id, "workspaceId": workspace_id}, {"$set": record}, upsert=True
        )
