"""Export records: one delivery of one document to one accounting tenant, scoped by workspace.

The record holds the exact request the preview showed (``plan``), the status and its history,
the remote ids written as each delivery step succeeds (so a retried job resumes instead of
repeating a step) and the last error.
"""

from __future__ import annotations

from typing import Any, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument
from pymongo.errors import DuplicateKeyError

from persistence.ids import new_id, utcnow
from persistence.pagination import newest_first

INDEXES = [
    IndexModel(
        [("workspaceId", ASCENDING), ("documentId", ASCENDING), ("createdAt", DESCENDING)],
        name="workspace_document_created",
    ),
    # The export history (exports.list): a workspace's exports, newest first.
    IndexModel([("workspaceId", ASCENDING), ("createdAt", DESCENDING)], name="workspace_created"),
    # At most one live (queued, sending or exported) export per document and tenant, even when
    # two sends race. Sparse, not partial: the in-memory test store ignores partial filters.
    IndexModel([("activeKey", ASCENDING)], unique=True, sparse=True, name="active_key_unique"),
]
LIVE = ("queued", "sending", "exported")


class ExportExists(Exception):
    """The document already has a live export to this tenant."""


class Exports:
    """The ``exports`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["exports"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def create(self, workspace_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """A queued export; ``ExportExists`` when the document has a live one to the tenant."""
        now = utcnow()
        record = {
            "_id": new_id("exp"),
            "workspaceId": workspace_id,
            **fields,
            "activeKey": ":".join(
                (workspace_id, fields["documentId"], fields["integrationId"], fields["tenantId"])
            ),
            "status": "queued",
            "history": [{"status": "queued", "at": now, "note": None}],
            "remote": {},
            "error": None,
            "errorReason": None,
            "attempts": 0,
            "createdAt": now,
            "updatedAt": now,
        }
        try:
            await self._col.insert_one(record)
        except DuplicateKeyError:
            raise ExportExists(fields["documentId"]) from None
        return record

    async def get(self, workspace_id: str, export_id: str) -> dict[str, Any] | None:
        return cast(
            dict[str, Any] | None,
            await self._col.find_one({"_id": export_id, "workspaceId": workspace_id}),
        )

    async def page(
        self,
        workspace_id: str,
        *,
        document_id: str | None,
        status: str | None,
        limit: int,
        after_row: tuple[Any, str] | None = None,
    ) -> list[dict[str, Any]]:
        """Exports newest first (ties by id), of one document or status when given; those
        after ``after_row`` (createdAt, id) when paging on."""
        query: dict[str, Any] = {"workspaceId": workspace_id}
        if document_id is not None:
            query["documentId"] = document_id
        if status is not None:
            query["status"] = status
        return await newest_first(self._col, query, limit, after_row)

    async def active_for(
        self, workspace_id: str, document_id: str, tenant_id: str, integration_id: str
    ) -> dict[str, Any] | None:
        """A queued, sending or exported record of the document to the same tenant."""
        return cast(
            dict[str, Any] | None,
            await self._col.find_one(
                {
                    "workspaceId": workspace_id,
                    "documentId": document_id,
                    "integrationId": integration_id,
                    "tenantId": tenant_id,
                    "status": {"$in": list(LIVE)},
                }
            ),
        )

    async def save_remote(self, workspace_id: str, export_id: str, remote: dict[str, Any]) -> None:
        await self._col.update_one(
            {"_id": export_id, "workspaceId": workspace_id},
            {"$set": {"remote": remote, "updatedAt": utcnow()}},
        )

    async def transition(
        self,
        workspace_id: str,
        export_id: str,
        status: str,
        *,
        note: str | None = None,
        error: str | None = None,
        error_reason: str | None = None,
        only_from: tuple[str, ...] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Move to ``status`` (recorded in the history); None when ``only_from`` did not hold.

        ``error`` is the failure in words, ``error_reason`` its kind (a connector error's
        ``reason``); both are cleared by a transition without them."""
        now = utcnow()
        query: dict[str, Any] = {"_id": export_id, "workspaceId": workspace_id}
        if only_from is not None:
            query["status"] = {"$in": list(only_from)}
        update: dict[str, Any] = {
            "$set": {
                "status": status,
                "error": error,
                "errorReason": error_reason,
                "updatedAt": now,
                **(extra or {}),
            },
            "$push": {"history": {"status": status, "at": now, "note": note or error}},
        }
        if status == "sending":
            update["$inc"] = {"attempts": 1}
        if status not in LIVE:  # failed or unlinked: the document may be sent again
            update["$unset"] = {"activeKey": ""}
        return cast(
            dict[str, Any] | None,
            await self._col.find_one_and_update(
                query, update, return_document=ReturnDocument.AFTER
            ),
        )
