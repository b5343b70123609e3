"""WhatsApp phone numbers of workspace members: who a message comes from, and where it goes.

A number belongs to one member of one workspace at a time (unique index): registering it again
moves it, so a photo never lands in two workspaces.
"""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.ids import utcnow

INDEXES = [IndexModel([("workspaceId", ASCENDING), ("userId", ASCENDING)], name="workspace_user")]


class WhatsAppSenders:
    """The ``whatsapp_senders`` collection (``_id`` is the phone number, digits only)."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["whatsapp_senders"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def register(self, phone: str, workspace_id: str, user_id: str) -> dict[str, Any]:
        found = await self._col.find_one_and_update(
            {"_id": phone},
            {
                "$set": {"workspaceId": workspace_id, "userId": user_id, "updatedAt": utcnow()},
                "$setOnInsert": {"createdAt": utcnow()},
            },
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        return dict(found)

    async def lookup(self, phone: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": phone})

    async def list(self, workspace_id: str) -> list[dict[str, Any]]:
        cursor = self._col.find({"workspaceId": workspace_id}).sort([("_id", ASCENDING)])
        return list(await cursor.to_list(None))

    async def remove(self, workspace_id: str, phone: str) -> bool:
        result = await self._col.delete_one({"_id": phone, "workspaceId": workspace_id})
        return bool(result.deleted_count)
