"""Automation rules, their execution stats, and which documents each rule has acted on.

A rule is stored with its definition (``schema.rules.RuleDefinition`` as JSON), its status and
its stats, which every run updates with ``$inc`` (concurrent workers never lose a count). The
``rule_applications`` collection holds one record per (rule, document, event): a worker that
retries a job, or a scheduled sweep that meets a document again, acts on it only once.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.errors import DuplicateKeyError

from persistence.ids import new_id, utcnow
from persistence.where import QUERY_TIME_LIMIT_MS

INDEXES = [
    IndexModel([("workspaceId", ASCENDING), ("createdAt", DESCENDING)], name="workspace_created"),
    IndexModel(
        [("workspaceId", ASCENDING), ("status", ASCENDING), ("triggerType", ASCENDING)],
        name="workspace_status_trigger",
    ),
]
APPLICATION_INDEXES = [
    IndexModel(
        [
            ("workspaceId", ASCENDING),
            ("ruleId", ASCENDING),
            ("documentId", ASCENDING),
            ("event", ASCENDING),
        ],
        unique=True,
        name="rule_document_event_unique",
    )
]
EMPTY_STATS: dict[str, Any] = {
    "runs": 0,
    "documentsMatched": 0,
    "actionsApplied": 0,
    "actionsFailed": 0,
    "lastRunAt": None,
    "lastError": None,
    "lastErrorAt": None,
}
MAX_RULES_PER_WORKSPACE = 200
MAX_ERROR = 500


class Rules:
    """The ``rules`` and ``rule_applications`` collections; every method is workspace-scoped."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["rules"]
        self._applied = db["rule_applications"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)
        await self._applied.create_indexes(APPLICATION_INDEXES)

    async def count(self, workspace_id: str) -> int:
        return int(await self._col.count_documents({"workspaceId": workspace_id}))

    async def create(
        self,
        workspace_id: str,
        *,
        name: str,
        text: str,
        definition: dict[str, Any],
        created_by: str,
        webhook_secret: str | None,
        next_run_at: datetime | None,
    ) -> dict[str, Any]:
        now = utcnow()
        record = {
            "_id": new_id("rul"),
            "workspaceId": workspace_id,
            "name": name,
            "status": "enabled",
            "triggerType": definition["trigger"]["type"],
            "naturalLanguageRule": text,
            "definition": definition,
            "createdBy": created_by,
            "webhookSecret": webhook_secret,  # encrypted with the keyring, bound to the id
            "nextRunAt": next_run_at,
            "stats": dict(EMPTY_STATS),
            "createdAt": now,
            "updatedAt": now,
        }
        await self._col.insert_one(record)
        return record

    async def get(self, workspace_id: str, rule_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": rule_id, "workspaceId": workspace_id})

    async def by_ids(self, workspace_id: str, rule_ids: list[str]) -> list[dict[str, Any]]:
        """The workspace's rules among ``rule_ids`` (any order; others' ids are not found)."""
        cursor = self._col.find(
            {"_id": {"$in": rule_ids}, "workspaceId": workspace_id},
            max_time_ms=QUERY_TIME_LIMIT_MS,
        )
        return list(await cursor.to_list(len(rule_ids)))

    async def listing(
        self, workspace_id: str, *, include_disabled: bool, limit: int
    ) -> list[dict[str, Any]]:
        """Newest first."""
        query: dict[str, Any] = {"workspaceId": workspace_id}
        if not include_disabled:
            query["status"] = "enabled"
        cursor = self._col.find(query, max_time_ms=QUERY_TIME_LIMIT_MS).sort(
            [("createdAt", DESCENDING), ("_id", DESCENDING)]
        )
        return list(await cursor.limit(limit).to_list(None))

    async def enabled(self, workspace_id: str, trigger_type: str) -> list[dict[str, Any]]:
        """The workspace's enabled rules of one trigger type, oldest first (their run order)."""
        cursor = self._col.find(
            {"workspaceId": workspace_id, "status": "enabled", "triggerType": trigger_type},
            max_time_ms=QUERY_TIME_LIMIT_MS,
        ).sort([("createdAt", ASCENDING), ("_id", ASCENDING)])
        return list(await cursor.to_list(MAX_RULES_PER_WORKSPACE))

    async def set_status(
        self, workspace_id: str, rule_id: str, status: str, next_run_at: datetime | None
    ) -> dict[str, Any] | None:
        return await self._col.find_one_and_update(
            {"_id": rule_id, "workspaceId": workspace_id},
            {"$set": {"status": status, "nextRunAt": next_run_at, "updatedAt": utcnow()}},
            return_document=ReturnDocument.AFTER,
        )

    async def set_webhook_secret(self, workspace_id: str, rule_id: str, sealed: str) -> None:
        await self._col.update_one(
            {"_id": rule_id, "workspaceId": workspace_id}, {"$set": {"webhookSecret": sealed}}
        )

    async def set_next_run(self, workspace_id: str, rule_id: str, at: datetime | None) -> None:
        await self._col.update_one(
            {"_id": rule_id, "workspaceId": workspace_id}, {"$set": {"nextRunAt": at}}
        )

    async def delete(self, workspace_id: str, rule_id: str) -> bool:
        result = await self._col.delete_one({"_id": rule_id, "workspaceId": workspace_id})
        if result.deleted_count:
            await self._applied.delete_many({"workspaceId": workspace_id, "ruleId": rule_id})
        return bool(result.deleted_count)

    async def record_run(
        self,
        workspace_id: str,
        rule_id: str,
        *,
        matched: int,
        applied: int,
        failed: int,
        error: str | None,
        runs: int = 1,
    ) -> None:
        """Add one run's numbers to the rule's stats (and its error, if any); a scheduled
        run counts once (``runs=0`` for each document it acts on)."""
        now = utcnow()
        update: dict[str, Any] = {
            "$inc": {
                "stats.runs": runs,
                "stats.documentsMatched": matched,
                "stats.actionsApplied": applied,
                "stats.actionsFailed": failed,
            },
            "$set": {"stats.lastRunAt": now},
        }
        if error is not None:
            update["$set"] |= {"stats.lastError": error[:MAX_ERROR], "stats.lastErrorAt": now}
        await self._col.update_one({"_id": rule_id, "workspaceId": workspace_id}, update)

    async def record_evaluations(self, workspace_id: str, rule_ids: Sequence[str]) -> None:
        """One run each for rules that were evaluated and did not match (one write for all)."""
        if rule_ids:
            await self._col.update_many(
                {"_id": {"$in": list(rule_ids)}, "workspaceId": workspace_id},
                {"$inc": {"stats.runs": 1}, "$set": {"stats.lastRunAt": utcnow()}},
            )

    async def claim(self, workspace_id: str, rule_id: str, document_id: str, event: str) -> bool:
        """Whether this rule may act on this document for this event (first claim only)."""
        try:
            await self._applied.insert_one(
                {
                    "workspaceId": workspace_id,
                    "ruleId": rule_id,
                    "documentId": document_id,
                    "event": event,
                    "at": utcnow(),
                }
            )
        except DuplicateKeyError:
            return False
        return True

    async def applied_to(
        self, workspace_id: str, rule_id: str, document_ids: Sequence[str], event: str
    ) -> set[str]:
        """Which of ``document_ids`` this rule has already acted on for ``event``."""
        rows = await self._applied.find(
            {
                "workspaceId": workspace_id,
                "ruleId": rule_id,
                "event": event,
                "documentId": {"$in": list(document_ids)},
            },
            {"documentId": 1},
        ).to_list(None)
        return {row["documentId"] for row in rows}
