"""Saved views: a named list of documents (a where clause, words, sort and columns) that a
person keeps for themselves or shares with their workspace.

A view is stored with its where clause as JSON (``WhereClause.model_dump(mode="json")``) and
read back through the model, so a view always runs the clause it was validated as.
"""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel

from persistence.ids import new_id, utcnow

INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("ownerId", ASCENDING), ("nameKey", ASCENDING)],
        name="workspace_owner_name",
    )
]


class Views:
    """The ``views`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["views"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    def _visible(self, workspace_id: str, user_id: str) -> dict[str, Any]:
        return {"workspaceId": workspace_id, "$or": [{"ownerId": user_id}, {"shared": True}]}

    async def create(
        self, workspace_id: str, owner_id: str, fields: dict[str, Any]
    ) -> dict[str, Any]:
        now = utcnow()
        record = {
            "_id": new_id("view"),
            "workspaceId": workspace_id,
            "ownerId": owner_id,
            **fields,
            "createdAt": now,
            "updatedAt": now,
        }
        await self._col.insert_one(record)
        return record

    async def visible(self, workspace_id: str, user_id: str) -> list[dict[str, Any]]:
        """The caller's own views and the workspace's shared ones, by name."""
        cursor = self._col.find(self._visible(workspace_id, user_id)).sort(
            [("nameKey", ASCENDING), ("_id", ASCENDING)]
        )
        return await cursor.to_list(None)

    async def owned_count(self, workspace_id: str, user_id: str) -> int:
        return await self._col.count_documents({"workspaceId": workspace_id, "ownerId": user_id})

    async def get(self, workspace_id: str, user_id: str, view_id: str) -> dict[str, Any] | None:
        """A view the caller can see (theirs, or shared), or None."""
        found: dict[str, Any] | None = await self._col.find_one(
            {"_id": view_id, **self._visible(workspace_id, user_id)}
        )
        return found

    async def update(
        self, workspace_id: str, view_id: str, changes: dict[str, Any]
    ) -> dict[str, Any] | None:
        found: dict[str, Any] | None = await self._col.find_one_and_update(
            {"_id": view_id, "workspaceId": workspace_id},
            {"$set": {**changes, "updatedAt": utcnow()}},
            return_document=True,
        )
        return found

    async def delete(self, workspace_id: str, view_id: str) -> bool:
        result = await self._col.delete_one({"_id": view_id, "workspaceId": workspace_id})
        return bool(result.deleted_count)
