"""Invitations to join a workspace, by e-mail address, each with a one-time code.

A code carries 256 random bits (like an API key), so only its SHA-256 digest is stored. There is
at most one open invitation per (workspace, address): inviting the same address again replaces
its code and role. Accepting deletes the invitation in the same operation that finds it, so a
code works once; an expired one is never accepted (and the TTL index removes it later).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument
from pymongo.errors import DuplicateKeyError

from persistence.api_keys import digest
from persistence.ids import new_id, utcnow

INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("email", ASCENDING)],
        unique=True,
        name="workspace_email_unique",
    ),
    IndexModel([("codeHash", ASCENDING)], unique=True, name="code_unique"),
    IndexModel([("expiresAt", ASCENDING)], expireAfterSeconds=0, name="invitation_ttl"),
]


class Invitations:
    """The ``invitations`` collection (scoped by workspace, except the invitee's lookup by code,
    which the code itself authorizes)."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["invitations"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def open(
        self,
        workspace_id: str,
        email: str,
        *,
        role: str,
        code: str,
        invited_by: str,
        expires_at: datetime,
        may_replace_owner: bool,
    ) -> dict[str, Any] | None:
        """Create the address's invitation, or replace the code and role of its open one; None
        (and nothing changed) when the open one invites an owner and ``may_replace_owner`` is
        false. Decided by the write itself, so a concurrent owner invitation is never replaced."""
        match: dict[str, Any] = {"workspaceId": workspace_id, "email": email}
        if not may_replace_owner:
            match["role"] = {"$ne": "owner"}
        try:
            found = await self._col.find_one_and_update(
                match,
                {
                    "$set": {
                        "role": role,
                        "codeHash": digest(code),
                        "invitedBy": invited_by,
                        "createdAt": utcnow(),
                        "expiresAt": expires_at,
                    },
                    "$setOnInsert": {"_id": new_id("inv")},
                },
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
        except DuplicateKeyError:  # the address's open invitation is an owner's
            return None
        return dict(found)

    async def pending(self, workspace_id: str) -> list[dict[str, Any]]:
        """The workspace's unexpired invitations, oldest first."""
        cursor = self._col.find(
            {"workspaceId": workspace_id, "expiresAt": {"$gt": utcnow()}}, {"codeHash": 0}
        ).sort([("createdAt", ASCENDING), ("_id", ASCENDING)])
        return list(await cursor.to_list(None))

    async def find_by_code(self, code: str) -> dict[str, Any] | None:
        """The unexpired invitation this code opens, or None."""
        return cast(
            dict[str, Any] | None,
            await self._col.find_one({"codeHash": digest(code), "expiresAt": {"$gt": utcnow()}}),
        )

    async def consume(self, invitation_id: str, code: str) -> dict[str, Any] | None:
        """Take the invitation for good (single use); None when another acceptance took it
        first or it expired meanwhile."""
        return cast(
            dict[str, Any] | None,
            await self._col.find_one_and_delete(
                {"_id": invitation_id, "codeHash": digest(code), "expiresAt": {"$gt": utcnow()}}
            ),
        )

    async def cancel_sent_by(self, workspace_id: str, user_id: str) -> int:
        """Withdraw the invitations ``user_id`` sent here (they left the workspace)."""
        result = await self._col.delete_many({"workspaceId": workspace_id, "invitedBy": user_id})
        return int(result.deleted_count)

    async def cancel(
        self, workspace_id: str, email: str, *, may_cancel_owner: bool
    ) -> Literal["cancelled", "missing", "owners-only"]:
        """Withdraw the address's open invitation; ``owners-only`` (and nothing changed) when it
        invites an owner and ``may_cancel_owner`` is false."""
        match: dict[str, Any] = {"workspaceId": workspace_id, "email": email}
        if not may_cancel_owner:
            match["role"] = {"$ne": "owner"}
        if (await self._col.delete_one(match)).deleted_count:
            return "cancelled"
        if not may_cancel_owner and await self._col.count_documents(
            {"workspaceId": workspace_id, "email": email}
        ):
            return "owners-only"
        return "missing"
