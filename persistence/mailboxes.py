"""Connected mailboxes (IMAP): where to read, the encrypted password, and how far it was read.

The password is stored only as the keyring's AES-GCM token bound to the mailbox id
(``passwordEncrypted``); no read here returns it except ``get_secret``. ``lastUid`` with
``uidValidity`` is the poller's bookmark: a restarted poller continues after the last message
it imported (and a changed UIDVALIDITY, which renumbers the folder, restarts from the message
ids already in the activity log).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.ids import new_id, utcnow

INDEXES = [
    IndexModel([("workspaceId", ASCENDING), ("createdAt", ASCENDING)], name="workspace_created"),
]
PUBLIC = {"passwordEncrypted": 0}


class Mailboxes:
    """The ``mailboxes`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["mailboxes"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    @staticmethod
    def new_id() -> str:
        return new_id("mbx")

    async def create(self, workspace_id: str, record: dict[str, Any]) -> dict[str, Any]:
        now = utcnow()
        stored = {
            **record,
            "workspaceId": workspace_id,
            "status": "active",
            "lastError": None,
            "lastErrorReason": None,
            "lastErrorAt": None,
            "lastPolledAt": None,
            "lastUid": 0,
            "uidValidity": None,
            "imported": 0,
            "createdAt": now,
            "updatedAt": now,
        }
        await self._col.insert_one(stored)
        return {k: v for k, v in stored.items() if k != "passwordEncrypted"}

    async def list(self, workspace_id: str) -> list[dict[str, Any]]:
        cursor = self._col.find({"workspaceId": workspace_id}, PUBLIC).sort(
            [("createdAt", ASCENDING), ("_id", ASCENDING)]
        )
        return list(await cursor.to_list(None))

    async def get(self, workspace_id: str, mailbox_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": mailbox_id, "workspaceId": workspace_id}, PUBLIC)

    async def get_secret(self, workspace_id: str, mailbox_id: str) -> dict[str, Any] | None:
        """The whole record, encrypted password included (for the connector only)."""
        return await self._col.find_one({"_id": mailbox_id, "workspaceId": workspace_id})

    async def delete(self, workspace_id: str, mailbox_id: str) -> bool:
        result = await self._col.delete_one({"_id": mailbox_id, "workspaceId": workspace_id})
        return bool(result.deleted_count)

    async def advance(
        self, workspace_id: str, mailbox_id: str, uid_validity: int, last_uid: int, imported: int
    ) -> None:
        """Move the bookmark past ``last_uid`` (never backwards within one UIDVALIDITY)."""
        await self._col.update_one(
            {"_id": mailbox_id, "workspaceId": workspace_id},
            {
                "$set": {"uidValidity": uid_validity, "updatedAt": utcnow()},
                "$max": {"lastUid": last_uid},
                "$inc": {"imported": imported},
            },
        )

    async def reset_bookmark(self, workspace_id: str, mailbox_id: str, uid_validity: int) -> None:
        await self._col.update_one(
            {"_id": mailbox_id, "workspaceId": workspace_id},
            {"$set": {"uidValidity": uid_validity, "lastUid": 0, "updatedAt": utcnow()}},
        )

    async def mark_polled(
        self,
        workspace_id: str,
        mailbox_id: str,
        error: str | None,
        at: datetime,
        reason: str | None = None,
    ) -> dict[str, Any] | None:
        """Record a poll's result (a failure in words, and its kind: a connector error's
        ``reason``); the record as it was before (to see a change of state)."""
        update: dict[str, Any] = {"lastPolledAt": at, "updatedAt": at}
        if error is None:
            update |= {"status": "active", "lastError": None, "lastErrorReason": None}
        else:
            update |= {
                "status": "error",
                "lastError": error,
                "lastErrorReason": reason,
                "lastErrorAt": at,
            }
        return await self._col.find_one_and_update(
            {"_id": mailbox_id, "workspaceId": workspace_id},
            {"$set": update},
            projection=PUBLIC,
            return_document=ReturnDocument.BEFORE,
        )
