"""Failed sign-ins, counted per account and per address (the sign-in throttle's memory).

One record per key (``account:<digest>`` or ``address:<digest>``; digests, so neither e-mail
addresses nor client addresses are written): how many sign-ins failed in a row, the last one,
and until when the key must wait. A record expires a day after its last failure (TTL index).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.ids import utcnow
from persistence.oauth import as_utc

FORGET_AFTER = timedelta(days=1)
INDEXES = [IndexModel([("expiresAt", ASCENDING)], expireAfterSeconds=0, name="failures_ttl")]


class SignInFailures:
    """The ``sign_in_failures`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["sign_in_failures"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def locked_until(self, keys: list[str]) -> datetime | None:
        """The latest moment any of ``keys`` must wait until, when it is still ahead."""
        now = utcnow()
        latest = None
        async for row in self._col.find({"_id": {"$in": keys}}, {"lockedUntil": 1}):
            until = row.get("lockedUntil")
            if until is not None and as_utc(until) > now and (latest is None or until > latest):
                latest = as_utc(until)
        return latest

    async def add_failure(self, key: str, fresh_after: timedelta) -> int:
        """Count one more failure of ``key`` (a run older than ``fresh_after`` starts over);
        the failures in the run now."""
        now = utcnow()
        record: dict[str, Any] | None = await self._col.find_one({"_id": key})
        stale = record is not None and as_utc(record["lastFailureAt"]) < now - fresh_after
        update: dict[str, Any] = {
            "$set": {"lastFailureAt": now, "expiresAt": now + FORGET_AFTER},
        }
        if stale:
            update["$set"]["failures"] = 1
        else:
            update["$inc"] = {"failures": 1}
        after = await self._col.find_one_and_update(
            {"_id": key}, update, upsert=True, return_document=ReturnDocument.AFTER
        )
        return int(after["failures"])

    async def lock(self, key: str, until: datetime) -> None:
        await self._col.update_one({"_id": key}, {"$set": {"lockedUntil": until}})

    async def forget(self, key: str) -> None:
        """A successful sign-in: the account's run of failures ends."""
        await self._col.delete_one({"_id": key})
