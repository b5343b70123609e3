"""Activity items: one per incoming document (upload, email, …) with its processing story."""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel

from persistence.ids import new_id, utcnow

INDEXES = [
    IndexModel([("workspaceId", ASCENDING), ("createdAt", DESCENDING)], name="workspace_created"),
    IndexModel(
        [("workspaceId", ASCENDING), ("documentIds", ASCENDING)], name="workspace_documents"
    ),
]


class Activity:
    """The ``activity`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["activity"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def create(
        self, workspace_id: str, source_type: str, document_ids: list[str], details: dict[str, Any]
    ) -> dict[str, Any]:
        now = utcnow()
        item = {
            "_id": new_id("act"),
            "workspaceId": workspace_id,
            "sourceType": source_type,
            "status": "queued",
            "reasoning": "Received; waiting for processing",
            "documentIds": document_ids,
            "details": details,
            "history": [{"status": "queued", "at": now}],
            "createdAt": now,
            "updatedAt": now,
        }
        await self._col.insert_one(item)
        return item

    async def set_status(
        self, workspace_id: str, activity_id: str, status: str, reasoning: str
    ) -> None:
        now = utcnow()
        await self._col.update_one(
            {"_id": activity_id, "workspaceId": workspace_id},
            {
                "$set": {"status": status, "reasoning": reasoning, "updatedAt": now},
                "$push": {"history": {"status": status, "at": now}},
            },
        )

    async def add_reasoning(self, workspace_id: str, activity_id: str, text: str) -> None:
        """Append ``text`` to the item's reasoning (automation rules that ran after an update)."""
        item = await self.get(workspace_id, activity_id)
        if item is None:
            return
        reasoning = " ".join(part for part in (item.get("reasoning"), text) if part)
        await self._col.update_one(
            {"_id": activity_id, "workspaceId": workspace_id},
            {"$set": {"reasoning": reasoning, "updatedAt": utcnow()}},
        )

    async def get(self, workspace_id: str, activity_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": activity_id, "workspaceId": workspace_id})
