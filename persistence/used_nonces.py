"""Single-use markers: a signed value (an integration's connect ``state``) is accepted once.

A signature proves the server made a value, not that nobody used it before. Using one inserts
its nonce here (``_id`` = purpose and nonce); a second use finds the key taken, atomically, on
every process. Markers are kept until the value would have expired anyway (TTL index).
"""

from __future__ import annotations

from datetime import datetime

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

INDEXES = [IndexModel([("expiresAt", ASCENDING)], expireAfterSeconds=0, name="nonce_ttl")]


class UsedNonces:
    """The ``used_nonces`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["used_nonces"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def use(self, purpose: str, nonce: str, expires_at: datetime) -> bool:
        """Mark ``nonce`` used; False when it was used before."""
        try:
            await self._col.insert_one({"_id": f"{purpose}:{nonce}", "expiresAt": expires_at})
        except DuplicateKeyError:
            return False
        return True
