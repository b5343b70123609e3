"""Originals in GridFS, one file per document, tagged with the workspace.

GridFS is not available through mongomock-motor, so these paths are covered by wire tests.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from gridfs.errors import NoFile
from motor.motor_asyncio import AsyncIOMotorDatabase, AsyncIOMotorGridFSBucket

from persistence.documents.records import StoredFile
from persistence.durability import JOURNALED

BUCKET = "originals"
CHUNK_SIZE = 255 * 1024


class Files:
    """The ``originals`` GridFS bucket."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._db = db
        self._bucket: AsyncIOMotorGridFSBucket | None = None

    @property
    def bucket(self) -> AsyncIOMotorGridFSBucket:
        # Created lazily: constructing a bucket on mongomock fails, and unit tests never use it.
        # Every original is part of an acknowledged intake: its file and chunks are journaled
        # (``persistence.durability``). Through the database: an upload writes with the
        # database's write concern whatever the bucket was given.
        if self._bucket is None:
            self._bucket = AsyncIOMotorGridFSBucket(
                self._db.with_options(write_concern=JOURNALED),
                bucket_name=BUCKET,
                chunk_size_bytes=CHUNK_SIZE,
            )
        return self._bucket

    async def ensure_indexes(self) -> None:
        """GridFS creates its own indexes on first write; ours serves ``bytes_stored``."""
        await self._db[f"{BUCKET}.files"].create_index(
            [("metadata.workspaceId", 1)], name="workspace"
        )

    async def bytes_stored(self, workspace_id: str) -> int:
        """Total size of the workspace's originals (what its storage quota counts)."""
        rows = await (
            self._db[f"{BUCKET}.files"]
            .aggregate(
                [
                    {"$match": {"metadata.workspaceId": workspace_id}},
                    {"$group": {"_id": None, "bytes": {"$sum": "$length"}}},
                ]
            )
            .to_list(None)
        )
        return int(rows[0]["bytes"]) if rows else 0

    async def put(
        self, workspace_id: str, document_id: str, data: bytes, file_name: str, mime_type: str
    ) -> StoredFile:
        """Store ``data``; returns the file reference kept on the document.

        The file's id is the document's: an intake killed while its chunks were being written
        (before GridFS wrote the file record that names them) is still removed whole by id
        (``delete_for``)."""
        sha256 = hashlib.sha256(data).hexdigest()
        file_id = document_id
        await self.bucket.upload_from_stream_with_id(
            file_id,
            file_name,
            data,
            metadata={
                "workspaceId": workspace_id,
                "documentId": document_id,
                "mimeType": mime_type,
                "sha256": sha256,
            },
        )
        return StoredFile(
            gridfsId=file_id,
            fileName=file_name,
            mimeType=mime_type,
            size=len(data),
            sha256=sha256,
        )

    async def read(self, workspace_id: str, file_ref: StoredFile) -> bytes:
        grid_out = await self.open(workspace_id, file_ref)
        return bytes(await grid_out.read())

    async def open(self, workspace_id: str, file_ref: StoredFile) -> Any:
        """An open GridFS file; FileNotFoundError when missing or of another workspace."""
        try:
            grid_out = await self.bucket.open_download_stream(file_ref["gridfsId"])
        except NoFile as exc:
            raise FileNotFoundError(str(file_ref["gridfsId"])) from exc
        # The reference comes from a workspace-scoped document, but check the file's own tag too.
        if (grid_out.metadata or {}).get("workspaceId") != workspace_id:
            raise FileNotFoundError(str(file_ref["gridfsId"]))
        return grid_out

    @staticmethod
    async def chunks(grid_out: Any) -> AsyncIterator[bytes]:
        """An opened file in chunks, for streaming responses."""
        while chunk := await grid_out.readchunk():
            yield bytes(chunk)

    async def delete(self, file_ref: StoredFile) -> None:
        """Remove the file (one already gone is no error: a clean-up may run twice)."""
        with contextlib.suppress(NoFile):
            await self.bucket.delete(file_ref["gridfsId"])

    async def delete_for(self, workspace_id: str, document_ids: Sequence[str]) -> int:
        """Remove the originals stored for ``document_ids`` of ``workspace_id`` (an intake rolled
        back: they have no document), chunks written without their file record included; how
        many file records there were."""
        removed = 0
        for document_id in document_ids:
            found = await self._db[f"{BUCKET}.files"].find_one(
                {"_id": document_id}, {"metadata.workspaceId": 1}
            )
            owner = (found or {}).get("metadata", {}).get("workspaceId", workspace_id)
            if owner != workspace_id:
                continue  # never another workspace's
            # GridFS removes the chunks by the file id even when the file record is missing.
            with contextlib.suppress(NoFile):
                await self.bucket.delete(document_id)
            removed += found is not None
        return removed
