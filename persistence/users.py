"""Users: people who own API keys and belong to workspaces."""

from __future__ import annotations

from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.ids import new_id, utcnow

INDEXES = [IndexModel([("email", ASCENDING)], unique=True, name="email_unique")]


class Users:
    """The ``users`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["users"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def get_or_create(self, email: str) -> dict[str, Any]:
        """The user with this email, created on first use (emails compare lower-cased)."""
        email = email.strip().lower()
        # An upsert keeps two concurrent admin commands from creating the same user twice.
        user = await self._col.find_one_and_update(
            {"email": email},
            {"$setOnInsert": {"_id": new_id("usr"), "email": email, "createdAt": utcnow()}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        return dict(user)

    async def get(self, user_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": user_id})

    async def emails(self, user_ids: list[str]) -> dict[str, str]:
        """The e-mail address of each of these users that exists."""
        rows = await self._col.find({"_id": {"$in": user_ids}}, {"email": 1}).to_list(None)
        return {row["_id"]: row["email"] for row in rows}

    async def find_by_email(self, email: str) -> dict[str, Any] | None:
        return await self._col.find_one({"email": email.strip().lower()})

    async def set_password_hash(self, user_id: str, password_hash: str) -> None:
        """Store a password's argon2 hash (the password itself is never written)."""
        await self._col.update_one(
            {"_id": user_id}, {"$set": {"passwordHash": password_hash, "passwordSetAt": utcnow()}}
        )
