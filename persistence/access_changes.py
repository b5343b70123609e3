"""The ``access_changes`` collection: credentials ended and memberships changed, for a while.

A live event stream is authorized when it opens and must end when that authorization does: a
key revoked, an OAuth grant revoked or narrowed, a member removed or given another role. The
process that makes the change tells its own listeners at once (``on_revoke``,
``on_membership_change``); the streams of *other* processes learn it here. Each change appends
one small record, written by the collection module that made the change, in the same call
(``api_keys``, ``oauth``, ``workspaces``); the event hub of every API process reads what is new
with its events poll (one query per poll, whatever the traffic), so no stream pays a store read
per event (``resolvers.services.events.hub``).

A record names what changed: ``keyId`` (an API key, or an OAuth token family, which also ends
the keys made through it) or ``userId`` + ``workspaceId`` (a membership). Records expire after
``RETENTION`` (a TTL index): a reader only ever reads the last seconds.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any, TypedDict, cast

from bson import ObjectId
from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import PyMongoError

from persistence.ids import utcnow
from persistence.where import QUERY_TIME_LIMIT_MS

log = logging.getLogger("fincap.access")

RETENTION = timedelta(hours=1)
# At most this many records per read: a burst (a member leaving many workspaces) is read whole
# over the next polls, and a reader that cannot keep up ends every stream (see the hub).
PAGE = 1000
INDEXES = [
    IndexModel(
        [("at", ASCENDING)], name="retention", expireAfterSeconds=int(RETENTION.total_seconds())
    ),
]


class AccessChange(TypedDict, total=False):
    """One stored change: ``keyId``, or ``userId`` and ``workspaceId``."""

    _id: ObjectId
    at: datetime
    keyId: str
    userId: str
    workspaceId: str


class AccessChanges:
    """The ``access_changes`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["access_changes"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def credential_ended(self, key_ids: list[str]) -> None:
        """API keys or OAuth token families revoked, or a family's scopes changed."""
        await self._append([{"keyId": key_id} for key_id in key_ids])

    async def membership_changed(self, user_id: str, workspace_id: str) -> None:
        """A membership was added, removed or given another role."""
        await self._append([{"userId": user_id, "workspaceId": workspace_id}])

    async def _append(self, changes: list[dict[str, Any]]) -> None:
        """Never raises for a store error: the change itself is written; the streams of other
        processes then see it at their next re-check (``EventLimits.recheck``)."""
        if not changes:
            return
        at = utcnow()
        try:
            await self._col.insert_many([{"_id": ObjectId(), "at": at, **c} for c in changes])
        except PyMongoError:
            log.exception("recording an access change failed; other processes re-check later")

    async def since(self, floor: ObjectId, limit: int = PAGE) -> list[AccessChange]:
        """The changes recorded after ``floor`` (an id made from a time), oldest first."""
        cursor = (
            self._col.find({"_id": {"$gt": floor}}, max_time_ms=QUERY_TIME_LIMIT_MS)
            .sort("_id", ASCENDING)
            .limit(limit)
        )
        return cast(list[AccessChange], await cursor.to_list(None))
