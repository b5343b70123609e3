"""A workspace's learned merchant → category corrections (from documents.update/bulk-edit)."""

from __future__ import annotations

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel

from engines.text import fold
from persistence.ids import utcnow

INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("merchantKey", ASCENDING)],
        unique=True,
        name="workspace_merchant_unique",
    )
]


def merchant_key(merchant: str) -> str:
    return " ".join(fold(merchant).split())


class CategoryOverrides:
    """The ``category_overrides`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["category_overrides"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def remember(self, workspace_id: str, merchant: str, category: str) -> None:
        await self._col.update_one(
            {"workspaceId": workspace_id, "merchantKey": merchant_key(merchant)},
            {"$set": {"merchant": merchant, "category": category, "updatedAt": utcnow()}},
            upsert=True,
        )

    async def all(self, workspace_id: str) -> dict[str, str]:
        """Merchant (as last written) → category, for the categorizer."""
        rows = await self._col.find({"workspaceId": workspace_id}).to_list(None)
        return {row["merchant"]: row["category"] for row in rows}
