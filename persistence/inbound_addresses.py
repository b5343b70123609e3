"""Each workspace's receiving alias (``<alias>@<FINCAP_INBOUND_DOMAIN>``).

One record per workspace; the alias is unique across workspaces, random (so it cannot be
guessed from the workspace's name), and replaced on rotation: the old alias stops receiving at
once. Retired aliases are kept in ``retired`` so activity search still recognises them.
"""

from __future__ import annotations

import secrets
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument
from pymongo.errors import DuplicateKeyError

from persistence.ids import utcnow

INDEXES = [IndexModel([("alias", ASCENDING)], unique=True, name="alias_unique")]
ALIAS_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # lower case, no look-alikes (l/1, o/0)


def new_alias() -> str:
    """``r-`` and 14 random characters: ~70 bits, safe to print on a business card."""
    return "r-" + "".join(secrets.choice(ALIAS_ALPHABET) for _ in range(14))


class InboundAddresses:
    """The ``inbound_addresses`` collection (``_id`` is the workspace id)."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["inbound_addresses"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def get_or_create(self, workspace_id: str) -> dict[str, Any]:
        """The workspace's alias record, created on first use."""
        found = await self._col.find_one({"_id": workspace_id})
        if found is not None:
            return found
        now = utcnow()
        record = {
            "_id": workspace_id,
            "alias": new_alias(),
            "createdAt": now,
            "rotatedAt": None,
            "retired": [],
        }
        try:
            await self._col.insert_one(record)
        except DuplicateKeyError:  # created concurrently (or, once in 2^70, a clash): read it
            found = await self._col.find_one({"_id": workspace_id})
            if found is None:
                return await self.get_or_create(workspace_id)
            return found
        return record

    async def rotate(self, workspace_id: str) -> tuple[dict[str, Any], str]:
        """A new alias for the workspace; (the record, the retired alias)."""
        current = await self.get_or_create(workspace_id)
        updated = await self._col.find_one_and_update(
            {"_id": workspace_id, "alias": current["alias"]},
            {
                "$set": {"alias": new_alias(), "rotatedAt": utcnow()},
                "$push": {"retired": current["alias"]},
            },
            return_document=ReturnDocument.AFTER,
        )
        if updated is None:  # rotated concurrently: rotate what is there now
            return await self.rotate(workspace_id)
        return updated, current["alias"]

    async def workspace_of(self, alias: str) -> str | None:
        """The workspace currently receiving at ``alias`` (retired aliases receive nothing)."""
        found = await self._col.find_one({"alias": alias.lower()}, {"_id": 1})
        return found["_id"] if found else None

    async def get(self, workspace_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": workspace_id})
