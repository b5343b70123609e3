"""API keys, stored only as a SHA-256 digest of the secret.

Keys carry at least 256 random bits, so a fast digest is enough: there is nothing to brute
force, unlike passwords, and lookup by digest is one indexed read per request.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import PyMongoError

from persistence.access_changes import AccessChanges
from persistence.ids import new_id, utcnow

log = logging.getLogger("fincap.access")

INDEXES = [
    IndexModel([("secretHash", ASCENDING)], unique=True, name="secret_hash_unique"),
    IndexModel([("userId", ASCENDING)], name="user"),
]


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class ApiKeys:
    """The ``api_keys`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["api_keys"]
        # Told the id of every key revoked through this process (caches forget it at once).
        self.on_revoke: list[Callable[[str], None]] = []
        # Other processes' live streams learn of revocations here.
        self._access = AccessChanges(db)

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def create(
        self,
        user_id: str,
        secret: str,
        restricted_to: str | None = None,
        name: str = "",
        scopes: list[str] | None = None,
        grant_family: str | None = None,
        origin: str = "api_key",
        origin_name: str | None = None,
    ) -> dict[str, Any]:
        """Store a new key for ``user_id``; the raw secret itself is never written.
        ``grant_family``: the third-party OAuth grant the key was made through (it ends with the
        grant). ``origin``: where it was made (``dashboard``, ``bootstrap``, ``operator``,
        ``oauth``, ``api_key``), ``origin_name`` the OAuth client's or the parent key's name."""
        record = {
            "_id": new_id("key"),
            "userId": user_id,
            "secretHash": digest(secret),
            "prefix": secret[:7],
            "name": name,
            "restrictedTo": restricted_to,
            "scopes": scopes or ["all"],
            "createdAt": utcnow(),
            "revokedAt": None,
            "origin": origin,
            "originName": origin_name,
            "lastUsedAt": None,
        }
        if grant_family is not None:
            record["grantFamily"] = grant_family
        await self._col.insert_one(record)
        return record

    async def get_active(self, key_id: str) -> dict[str, Any] | None:
        """The key by id unless revoked (without its digest)."""
        return await self._col.find_one({"_id": key_id, "revokedAt": None}, {"secretHash": 0})

    async def revoke_restricted_to(self, user_id: str, workspace_id: str) -> int:
        """Revoke the user's keys restricted to ``workspace_id`` (they left it); how many."""
        live = {"userId": user_id, "restrictedTo": workspace_id, "revokedAt": None}
        ids = [row["_id"] for row in await self._col.find(live, {"_id": 1}).to_list(None)]
        if not ids:
            return 0
        result = await self._col.update_many(
            {"_id": {"$in": ids}, "revokedAt": None}, {"$set": {"revokedAt": utcnow()}}
        )
        for key_id in ids:
            for listener in self.on_revoke:
                listener(key_id)
        await self._access.credential_ended(ids)
        return int(result.modified_count)

    async def find_active(self, secret: str) -> dict[str, Any] | None:
        """The key record for this secret, unless unknown or revoked."""
        return await self._col.find_one({"secretHash": digest(secret), "revokedAt": None})

    async def mark_used(self, record: dict[str, Any], at: datetime, every: timedelta) -> None:
        """Record that the key ``record`` (as just read) was used ``at``, unless that was
        recorded less than ``every`` ago: one write per key and interval, none meanwhile (the
        filter keeps concurrent processes from writing twice)."""
        last = record.get("lastUsedAt")
        if last is not None and (last if last.tzinfo else last.replace(tzinfo=UTC)) > at - every:
            return
        key_id = record["_id"]
        try:
            await self._col.update_one(
                {
                    "_id": key_id,
                    "$or": [{"lastUsedAt": None}, {"lastUsedAt": {"$lt": at - every}}],
                },
                {"$set": {"lastUsedAt": at}},
            )
        except PyMongoError as exc:
            # A convenience for the keys screen: a store refusing writes (a full disk, no
            # primary) must not refuse the reads this key may still make.
            log.warning("recording the last use of key %s failed: %s", key_id, type(exc).__name__)

    async def list_usable_in(
        self,
        user_id: str,
        workspace_id: str,
        *,
        include_unrestricted: bool,
        include_revoked: bool = False,
    ) -> list[dict[str, Any]]:
        """``user_id``'s keys restricted to ``workspace_id`` (and, asked for, the unrestricted
        ones, which act there too), newest first."""
        places: list[str | None] = [workspace_id, None] if include_unrestricted else [workspace_id]
        query: dict[str, Any] = {"userId": user_id, "restrictedTo": {"$in": places}}
        if not include_revoked:
            query["revokedAt"] = None
        cursor = self._col.find(query, {"secretHash": 0}).sort([("createdAt", -1), ("_id", -1)])
        return await cursor.to_list(None)

    async def get(self, user_id: str, key_id: str) -> dict[str, Any] | None:
        """One of ``user_id``'s keys (without its digest), revoked or not."""
        return await self._col.find_one({"_id": key_id, "userId": user_id}, {"secretHash": 0})

    async def revoke(self, user_id: str, key_id: str) -> bool:
        result = await self._col.update_one(
            {"_id": key_id, "userId": user_id, "revokedAt": None}, {"$set": {"revokedAt": utcnow()}}
        )
        for listener in self.on_revoke:
            listener(key_id)
        if result.modified_count:
            await self._access.credential_ended([key_id])
        return result.modified_count == 1
