"""A workspace's tags: a name people file documents under, and its colour.

Documents hold their tags by name (``documents.tags``), so a where clause and an export read
the words people chose; a name is unique in a workspace whatever its case (``nameKey``), and
renaming or deleting a tag rewrites the documents that carry it (``documents.bulk.rename_tag``;
a deleted tag is renamed to None).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument
from pymongo.errors import DuplicateKeyError

from engines.text import fold
from persistence.ids import new_id, utcnow

INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("nameKey", ASCENDING)],
        unique=True,
        name="workspace_name_unique",
    )
]


class TagTaken(ValueError):
    """Another tag of the workspace has that name (in any case)."""


def name_key(name: str) -> str:
    """The name as tags are told apart: folded case and accents, spaces collapsed."""
    return " ".join(fold(name).split())


class Tags:
    """The ``tags`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["tags"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def create(self, workspace_id: str, name: str, colour: str) -> dict[str, Any]:
        now = utcnow()
        record = {
            "_id": new_id("tag"),
            "workspaceId": workspace_id,
            "name": name,
            "nameKey": name_key(name),
            "colour": colour,
            "createdAt": now,
            "updatedAt": now,
        }
        try:
            await self._col.insert_one(record)
        except DuplicateKeyError:
            raise TagTaken(name) from None
        return record

    async def list(self, workspace_id: str) -> list[dict[str, Any]]:
        cursor = self._col.find({"workspaceId": workspace_id}).sort("nameKey", ASCENDING)
        return await cursor.to_list(None)

    async def count(self, workspace_id: str) -> int:
        return await self._col.count_documents({"workspaceId": workspace_id})

    async def get(self, workspace_id: str, tag_id: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = await self._col.find_one(
            {"_id": tag_id, "workspaceId": workspace_id}
        )
        return found

    async def by_keys(self, workspace_id: str, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``nameKey`` → tag, for the keys that name a tag of the workspace."""
        cursor = self._col.find({"workspaceId": workspace_id, "nameKey": {"$in": keys}})
        return {tag["nameKey"]: tag for tag in await cursor.to_list(None)}

    async def update(
        self, workspace_id: str, tag_id: str, changes: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The tag after ``changes`` (name and/or colour); None when it is gone."""
        fields = dict(changes)
        if "name" in fields:
            fields["nameKey"] = name_key(fields["name"])
        try:
            updated: dict[str, Any] | None = await self._col.find_one_and_update(
                {"_id": tag_id, "workspaceId": workspace_id},
                {"$set": {**fields, "updatedAt": utcnow()}},
                return_document=ReturnDocument.AFTER,
            )
        except DuplicateKeyError:
            raise TagTaken(str(changes.get("name"))) from None
        return updated

    async def delete(self, workspace_id: str, tag_id: str) -> bool:
        result = await self._col.delete_one({"_id": tag_id, "workspaceId": workspace_id})
        return result.deleted_count == 1
