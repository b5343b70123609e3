"""Originals in GridFS, one file per document, tagged with the workspace.

GridFS is not available through mongomock-motor, so these paths are covered by wire tests.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import AsyncIterator
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
        """Store ``data``; returns the file reference kept on the document."""
        sha256 = hashlib.sha256(data).hexdigest()
        file_id = await self.bucket.upload_from_stream(
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
