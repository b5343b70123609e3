"""Activity items: one per incoming item (upload, email, WhatsApp message, …) with its story.

An item holds the documents it produced (none for a message with nothing financial, several for
an email with several attachments). Each document's outcome is recorded under ``outcomes``; the
item's own status is the combination once every document has one, so a worker finishing the
last attachment is the one that settles the item (``find_one_and_update`` returns the item as
that write left it, so two workers cannot both see it complete).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument

from domain.documents import NEEDS_A_LOOK, SAVED
from persistence.durability import journaled
from persistence.ids import new_id, utcnow
from persistence.units import joined

INDEXES = [
    IndexModel([("workspaceId", ASCENDING), ("createdAt", DESCENDING)], name="workspace_created"),
    IndexModel(
        [("workspaceId", ASCENDING), ("documentIds", ASCENDING)], name="workspace_documents"
    ),
    # Redelivered mail and WhatsApp retries are recognised by their message id.
    IndexModel(
        [("workspaceId", ASCENDING), ("sourceType", ASCENDING), ("messageId", ASCENDING)],
        name="workspace_source_message",
    ),
]
# How many items a text search reads at most before paging (newest first).
SEARCH_SCAN_LIMIT = 2000


def combine_outcomes(outcomes: Sequence[tuple[str, str, str]]) -> tuple[str, str]:
    """The item's status and reasoning from its documents' (name, status, reason)."""
    statuses = {status for _, status, _ in outcomes}
    if len(outcomes) == 1:
        return outcomes[0][1], outcomes[0][2]
    if len(statuses) == 1:
        status = next(iter(statuses))
    elif statuses.intersection(SAVED):
        # Something was read, something else was not (a failed or skipped attachment).
        status = "warning" if statuses.intersection(NEEDS_A_LOOK) else "processed"
    else:
        status = "failed" if "failed" in statuses else "skipped"
    reasoning = " ".join(f"{name}: {status} — {reason}" for name, status, reason in outcomes)
    return status, reasoning


class Activity:
    """The ``activity`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        # Joined: an intake writes its item in one unit with its documents and jobs.
        self._col = joined(db["activity"])
        # New items and their documents are part of an acknowledged intake: on disk when answered.
        self._durable = joined(journaled(db["activity"]))

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def create(
        self,
        workspace_id: str,
        source_type: str,
        document_ids: list[str],
        details: dict[str, Any],
        *,
        status: str = "queued",
        reasoning: str = "Received; waiting for processing",
        message_id: str | None = None,
        activity_id: str | None = None,
    ) -> dict[str, Any]:
        item = self.new_item(
            workspace_id,
            source_type,
            document_ids,
            details,
            status=status,
            reasoning=reasoning,
            message_id=message_id,
            activity_id=activity_id,
        )
        await self.insert(item)
        return item

    @staticmethod
    def new_item(
        workspace_id: str,
        source_type: str,
        document_ids: list[str],
        details: dict[str, Any],
        *,
        status: str = "queued",
        reasoning: str = "Received; waiting for processing",
        message_id: str | None = None,
        activity_id: str | None = None,
    ) -> dict[str, Any]:
        """A new item as it is stored (an intake's journal keeps it until the item is written)."""
        now = utcnow()
        item: dict[str, Any] = {
            "_id": activity_id or new_id("act"),
            "workspaceId": workspace_id,
            "sourceType": source_type,
            "status": status,
            "reasoning": reasoning,
            "documentIds": document_ids,
            "details": details,
            "history": [{"status": status, "at": now}],
            "createdAt": now,
            "updatedAt": now,
        }
        if message_id is not None:
            item["messageId"] = message_id
        return item

    async def insert(self, item: dict[str, Any]) -> None:
        """Write an item ``new_item`` made."""
        await self._durable.insert_one(item)

    async def delete(self, workspace_id: str, activity_id: str) -> None:
        """Remove an item whose intake failed half-way (nothing refers to it yet)."""
        await self._col.delete_one({"_id": activity_id, "workspaceId": workspace_id})

    async def set_status(
        self,
        workspace_id: str,
        activity_id: str,
        status: str,
        reasoning: str,
        *,
        error_reason: str | None = None,
    ) -> None:
        """Move the item to ``status``; a failure's kind (a connector error's ``reason``) is
        kept in its details as ``errorReason``, as a mailbox's failure item keeps it."""
        now = utcnow()
        changed: dict[str, Any] = {"status": status, "reasoning": reasoning, "updatedAt": now}
        if error_reason is not None:
            changed["details.errorReason"] = error_reason
        await self._col.update_one(
            {"_id": activity_id, "workspaceId": workspace_id},
            {
                "$set": changed,
                "$push": {"history": {"status": status, "at": now}},
            },
        )

    async def add_reasoning(self, workspace_id: str, activity_id: str, text: str) -> None:
        """Append ``text`` to the item's reasoning (automation rules that ran after an update)."""
        item = await self.get(workspace_id, activity_id)
        if item is None:
            return
        reasoning = " ".join(part for part in (item.get("reasoning"), text) if part)
        await self._col.update_one(
            {"_id": activity_id, "workspaceId": workspace_id},
            {"$set": {"reasoning": reasoning, "updatedAt": utcnow()}},
        )

    async def record_outcome(
        self,
        workspace_id: str,
        activity_id: str,
        document_id: str,
        status: str,
        reason: str,
    ) -> dict[str, Any] | None:
        """Record one document's outcome; the item, settled, when this was its last document
        (else None: other documents are still on their way)."""
        item = await self._col.find_one_and_update(
            {"_id": activity_id, "workspaceId": workspace_id},
            {
                "$set": {
                    f"outcomes.{document_id}": {"status": status, "reason": reason},
                    "updatedAt": utcnow(),
                }
            },
            return_document=ReturnDocument.AFTER,
        )
        if item is None:
            return None
        outcomes = item.get("outcomes") or {}
        documents = item.get("documentIds") or [document_id]
        if not all(doc in outcomes for doc in documents):
            return None
        names = item.get("documentNames") or {}
        final, reasoning = combine_outcomes(
            [
                (names.get(doc, doc), outcomes[doc]["status"], outcomes[doc]["reason"])
                for doc in documents
            ]
        )
        not_read = (item.get("details") or {}).get("ignored") or []
        if not_read:
            # Parts of the message that became no document, and why (an e-mail's other files,
            # attachments beyond the number one message may bring).
            reasoning += " Not read: " + "; ".join(str(part) for part in not_read) + "."
        await self.set_status(workspace_id, activity_id, final, reasoning)
        return {**item, "status": final, "reasoning": reasoning}

    async def attach_documents(
        self, workspace_id: str, activity_id: str, document_ids: list[str]
    ) -> None:
        """Documents found after the item was created (media fetched later) join it."""
        await self._durable.update_one(
            {"_id": activity_id, "workspaceId": workspace_id},
            {"$set": {"documentIds": document_ids, "updatedAt": utcnow()}},
        )

    async def mark_notified(
        self, workspace_id: str, activity_id: str, sent_id: str, text: str
    ) -> None:
        """The sender was told (a reply's id and text), so a retried job does not repeat it."""
        await self._col.update_one(
            {"_id": activity_id, "workspaceId": workspace_id},
            {"$set": {"details.notify.sentId": sent_id, "details.notify.text": text}},
        )

    async def set_document_names(
        self, workspace_id: str, activity_id: str, names: dict[str, str]
    ) -> None:
        await self._col.update_one(
            {"_id": activity_id, "workspaceId": workspace_id}, {"$set": {"documentNames": names}}
        )

    async def get(self, workspace_id: str, activity_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": activity_id, "workspaceId": workspace_id})

    async def find_by_message_ids(
        self, workspace_id: str, source_type: str, message_ids: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Items of ``source_type`` for these message ids (the provider search cross-check)."""
        if not message_ids:
            return []
        cursor = self._col.find(
            {
                "workspaceId": workspace_id,
                "sourceType": source_type,
                "messageId": {"$in": list(message_ids)},
            }
        )
        return list(await cursor.to_list(None))

    async def search(
        self,
        workspace_id: str,
        query: str,
        source_types: Sequence[str],
        statuses: Sequence[str] | None,
        *,
        alias: str | None = None,
    ) -> list[dict[str, Any]]:
        """Items whose sender, recipients, subject, file name, caption, message id or reasoning
        contain ``query`` (case-insensitive, literally), newest first. With ``alias``, every
        inbound-email item received at that alias matches as well."""
        pattern = {"$regex": re.escape(query), "$options": "i"}
        text: list[dict[str, Any]] = [
            {f"details.{name}": pattern}
            for name in ("from", "to", "subject", "fileName", "caption", "snippet", "sender")
        ] + [{"messageId": pattern}, {"reasoning": pattern}]
        if alias is not None:
            text.append({"sourceType": "inbound-email", "details.alias": alias})
        base: dict[str, Any] = {
            "workspaceId": workspace_id,
            "sourceType": {"$in": list(source_types)},
        }
        if statuses:
            base["status"] = {"$in": list(statuses)}
        cursor = (
            self._col.find({**base, "$or": text})
            .sort([("createdAt", DESCENDING), ("_id", DESCENDING)])
            .limit(SEARCH_SCAN_LIMIT)
        )
        return list(await cursor.to_list(None))

    async def count(self, workspace_id: str | None = None) -> int:
        query = {} if workspace_id is None else {"workspaceId": workspace_id}
        return int(await self._col.count_documents(query))
