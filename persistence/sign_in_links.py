"""One-time sign-in links (``fincap admin bootstrap``, ``fincap admin sign-in-link``).

Stored only as a SHA-256 digest of the secret (256 random bits, as API keys and OAuth codes),
bound to one user and one workspace, single use (consumed atomically) and short-lived.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.api_keys import digest
from persistence.ids import utcnow

INDEXES = [
    # Expired links go away by themselves a day later (kept that long so a late click is told
    # "expired", not "unknown"; both get the same answer anyway).
    IndexModel([("expiresAt", ASCENDING)], expireAfterSeconds=86400, name="link_ttl"),
]


class SignInLinks:
    """The ``sign_in_links`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["sign_in_links"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def create(
        self, secret: str, user_id: str, workspace_id: str, expires_at: datetime
    ) -> None:
        await self._col.insert_one(
            {
                "_id": digest(secret),
                "userId": user_id,
                "workspaceId": workspace_id,
                "createdAt": utcnow(),
                "expiresAt": expires_at,
                "usedAt": None,
            }
        )

    async def consume(self, secret: str) -> dict[str, Any] | None:
        """Mark the link used and return it; None when unknown, used or expired (atomic: two
        clicks at once sign in once)."""
        now = utcnow()
        return await self._col.find_one_and_update(
            {"_id": digest(secret), "usedAt": None, "expiresAt": {"$gt": now}},
            {"$set": {"usedAt": now}},
            return_document=ReturnDocument.AFTER,
        )
