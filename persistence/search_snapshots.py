"""Stored snapshots of workspaces' search indexes (``engines.ranking.index_snapshot``).

A snapshot is opaque bytes, tens of MB at 100k documents, so it is kept in chunks under
MongoDB's 16 MB document limit (``CHUNK`` bytes each) in the ``search_snapshots`` collection,
beside one head record per workspace naming the generation to read, its size and SHA-256.
A plain collection rather than GridFS: the in-memory test store has no GridFS, and every read
stays on the ordinary driver path.

Writing stores the new generation's chunks first, then swaps the head (the old generation is
deleted after): a reader sees the old snapshot or the new one, never half of one, and two
replicas writing at once leave the last head written. Every read and write names the workspace
(``workspaceId``) in the query itself: one workspace's snapshot is never read for another.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from bson import Binary
from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, ReturnDocument

from persistence.ids import new_id, utcnow

CHUNK = 8 * 1024 * 1024
HEAD = "head"
CHUNK_KIND = "chunk"


class SearchSnapshots:
    """The ``search_snapshots`` collection: heads and chunks."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["search_snapshots"]

    async def ensure_indexes(self) -> None:
        """Chunks are read by workspace and generation, in order."""
        await self._col.create_index(
            [("workspaceId", ASCENDING), ("generation", ASCENDING), ("n", ASCENDING)],
            name="workspace_generation_chunk",
        )

    async def put(self, workspace_id: str, data: bytes, watermark: datetime) -> None:
        """Keep ``data`` as the workspace's snapshot (``watermark``: when the refresh that
        produced the index began), replacing the last one."""
        generation = new_id("snap")
        chunks = [
            {
                "_id": f"{workspace_id}:{generation}:{n}",
                "kind": CHUNK_KIND,
                "workspaceId": workspace_id,
                "generation": generation,
                "n": n,
                "data": Binary(data[start : start + CHUNK]),
            }
            for n, start in enumerate(range(0, len(data), CHUNK))
        ]
        for chunk in chunks:  # one at a time: a batch of them would pass the message limit
            await self._col.insert_one(chunk)
        head = {
            "kind": HEAD,
            "workspaceId": workspace_id,
            "generation": generation,
            "chunks": len(chunks),
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
            "watermark": watermark,
            "createdAt": utcnow(),
        }
        old = await self._col.find_one_and_update(
            {"_id": _head_id(workspace_id), "workspaceId": workspace_id},
            {"$set": head},
            upsert=True,
            return_document=ReturnDocument.BEFORE,
        )
        if old is not None and old.get("generation") != generation:
            await self._col.delete_many(
                {"workspaceId": workspace_id, "generation": old["generation"], "kind": CHUNK_KIND}
            )

    async def head(self, workspace_id: str) -> dict[str, Any] | None:
        """The workspace's head record (generation, size, watermark), or None."""
        query = {"_id": _head_id(workspace_id), "workspaceId": workspace_id}
        return await self._col.find_one(query)

    async def get(self, workspace_id: str) -> tuple[bytes, datetime] | None:
        """The workspace's snapshot and its watermark, or None when there is none or it is
        incomplete or damaged (its chunks disagree with its head)."""
        head = await self.head(workspace_id)
        if head is None:
            return None
        cursor = self._col.find(
            {"workspaceId": workspace_id, "generation": head["generation"], "kind": CHUNK_KIND}
        ).sort("n", ASCENDING)
        parts = [bytes(row["data"]) async for row in cursor]
        data = b"".join(parts)
        if (
            len(parts) != head.get("chunks")
            or len(data) != head.get("bytes")
            or hashlib.sha256(data).hexdigest() != head.get("sha256")
        ):
            return None
        return data, head["watermark"]

    async def delete(self, workspace_id: str) -> None:
        """Forget the workspace's snapshot (the next process to search it rebuilds)."""
        await self._col.delete_many({"workspaceId": workspace_id})


def _head_id(workspace_id: str) -> str:
    return f"{workspace_id}:{HEAD}"
