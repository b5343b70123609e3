"""WhatsApp phone numbers of workspace members: who a message comes from, and where it goes.

A number is *registered* (``whatsapp_senders``, ``_id`` = the number) in one workspace at a
time: the unique ``_id`` makes a second workspace's registration fail in the store itself, so
two concurrent verifications cannot both win. Before that, a registration is a *claim*
(``whatsapp_sender_claims``): pending until the number proves it is the claimant's by sending
the claim's one-time code to the business number. A claim does not block other claims (a
stranger's claim on your number must not lock you out); the first verified one registers the
number and the other claims on it end. Codes are stored as digests bound to the number.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, Literal

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from persistence.ids import new_id, utcnow

INDEXES = [IndexModel([("workspaceId", ASCENDING), ("userId", ASCENDING)], name="workspace_user")]
CLAIM_INDEXES = [
    IndexModel(
        [("phone", ASCENDING), ("workspaceId", ASCENDING)],
        unique=True,
        name="phone_workspace_unique",
    ),
    IndexModel([("workspaceId", ASCENDING), ("userId", ASCENDING)], name="workspace_user"),
    IndexModel([("expiresAt", ASCENDING)], expireAfterSeconds=0, name="claim_ttl"),
]
Verification = Literal["registered", "held-elsewhere"]


def code_digest(phone: str, code: str) -> str:
    """The stored form of a claim's code: bound to the number it was made for."""
    return hashlib.sha256(f"{phone}:{code}".encode()).hexdigest()


class WhatsAppSenders:
    """The ``whatsapp_senders`` (registered numbers) and ``whatsapp_sender_claims`` (pending
    ones) collections; numbers are digits only, with the country code."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["whatsapp_senders"]
        self._claims = db["whatsapp_sender_claims"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)
        await self._claims.create_indexes(CLAIM_INDEXES)

    # Registered numbers --------------------------------------------------------------------

    async def lookup(self, phone: str) -> dict[str, Any] | None:
        """The registration of ``phone`` (any workspace: the webhook routes by it)."""
        return await self._col.find_one({"_id": phone})

    async def registered(self, workspace_id: str) -> list[dict[str, Any]]:
        cursor = self._col.find({"workspaceId": workspace_id}).sort([("_id", ASCENDING)])
        return list(await cursor.to_list(None))

    # Claims --------------------------------------------------------------------------------

    async def claim(
        self,
        phone: str,
        workspace_id: str,
        user_id: str,
        *,
        code: str,
        by: str,
        expires_at: datetime,
    ) -> dict[str, Any]:
        """Open (or renew, with a new code) this workspace's claim on ``phone``."""
        now = utcnow()
        await self._claims.update_one(
            {"phone": phone, "workspaceId": workspace_id},
            {
                "$set": {
                    "userId": user_id,
                    "codeHash": code_digest(phone, code),
                    "claimedBy": by,
                    "updatedAt": now,
                    "expiresAt": expires_at,
                },
                "$setOnInsert": {"_id": new_id("wac"), "createdAt": now},
            },
            upsert=True,
        )
        found = await self._claims.find_one(
            {"phone": phone, "workspaceId": workspace_id}, {"codeHash": 0}
        )
        assert found is not None
        return dict(found)

    async def claims(self, workspace_id: str) -> list[dict[str, Any]]:
        """The workspace's unexpired claims (without their codes), by number."""
        cursor = self._claims.find(
            {"workspaceId": workspace_id, "expiresAt": {"$gt": utcnow()}}, {"codeHash": 0}
        ).sort([("phone", ASCENDING)])
        return list(await cursor.to_list(None))

    async def claimed_in(self, phone: str) -> list[str]:
        """The workspaces with an unexpired claim on ``phone``."""
        rows = await self._claims.find(
            {"phone": phone, "expiresAt": {"$gt": utcnow()}}, {"workspaceId": 1}
        ).to_list(None)
        return sorted({row["workspaceId"] for row in rows})

    async def verify(
        self, phone: str, codes: list[str]
    ) -> tuple[dict[str, Any], Verification] | None:
        """A message from ``phone`` carried ``codes``: register the number in the workspace
        whose unexpired claim has one of them. None when no claim matches; ``held-elsewhere``
        (the claim ends) when the number is registered in another workspace meanwhile."""
        if not codes:
            return None
        claim = await self._claims.find_one(
            {
                "phone": phone,
                "codeHash": {"$in": [code_digest(phone, code) for code in codes]},
                "expiresAt": {"$gt": utcnow()},
            }
        )
        if claim is None:
            return None
        now = utcnow()
        record = {
            "_id": phone,
            "workspaceId": claim["workspaceId"],
            "userId": claim["userId"],
            "registeredBy": claim.get("claimedBy"),
            "createdAt": now,
            "updatedAt": now,
            "verifiedAt": now,
        }
        try:
            await self._col.insert_one(record)
        except DuplicateKeyError:
            await self._claims.delete_one({"_id": claim["_id"]})
            return claim, "held-elsewhere"
        # Registered: every claim on the number ends (the others can never succeed now).
        await self._claims.delete_many({"phone": phone})
        return record, "registered"

    # Both --------------------------------------------------------------------------------

    async def remove(self, workspace_id: str, phone: str) -> bool:
        """Forget ``phone`` in this workspace: its registration and its claim."""
        registered = await self._col.delete_one({"_id": phone, "workspaceId": workspace_id})
        claimed = await self._claims.delete_one({"phone": phone, "workspaceId": workspace_id})
        return bool(registered.deleted_count or claimed.deleted_count)

    async def remove_for_member(self, workspace_id: str, user_id: str) -> int:
        """Forget every number of ``user_id`` in this workspace (they left it); how many."""
        query = {"workspaceId": workspace_id, "userId": user_id}
        registered = await self._col.delete_many(query)
        claimed = await self._claims.delete_many(query)
        return int(registered.deleted_count) + int(claimed.deleted_count)
