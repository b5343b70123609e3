"""CSV column mappings a workspace has used, kept for its next import of the same bank's file.

A mapping is saved under the account it was used for (``account:<name>``) and under the file's
header (``header:<digest>``): the next file of that account, or with that header, is read the
same way without being told.
"""

from __future__ import annotations

from typing import Any, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel

from persistence.ids import utcnow

INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("key", ASCENDING)], unique=True, name="workspace_key_unique"
    )
]
# Bounds what one workspace can make the server store.
MAX_MAPPINGS_PER_WORKSPACE = 200


class StatementMappings:
    """The ``statement_mappings`` collection, workspace-scoped."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["statement_mappings"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def find(self, workspace_id: str, keys: list[str]) -> dict[str, Any] | None:
        """The mapping saved under the first of ``keys`` that has one."""
        for key in keys:
            found = await self._col.find_one({"workspaceId": workspace_id, "key": key})
            if found is not None:
                return cast(dict[str, Any], found["mapping"])
        return None

    async def save(
        self, workspace_id: str, keys: list[str], mapping: dict[str, Any], header: list[str]
    ) -> bool:
        """Remember ``mapping`` under each key; False when the workspace holds its maximum and
        a key is new (nothing is saved then)."""
        existing = await self._col.count_documents({"workspaceId": workspace_id})
        known = await self._col.count_documents({"workspaceId": workspace_id, "key": {"$in": keys}})
        if existing + len(keys) - known > MAX_MAPPINGS_PER_WORKSPACE:
            return False
        for key in keys:
            await self._col.update_one(
                {"workspaceId": workspace_id, "key": key},
                {"$set": {"mapping": mapping, "header": header[:100], "updatedAt": utcnow()}},
                upsert=True,
            )
        return True
