"""Approval requests: gated calls waiting for an owner or admin, scoped by workspace.

Approving claims the request atomically (``pending`` → ``running`` in one
``find_one_and_update``), so of two concurrent approvals exactly one runs the call; the other
finds nothing pending. The run ends ``executed`` (with its result), or back in ``pending`` with
the error when the call failed (nothing was done, so it may be approved again or rejected).
"""

from __future__ import annotations

from typing import Any, Literal, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, DESCENDING, IndexModel, ReturnDocument

from persistence.ids import new_id, utcnow
from persistence.pagination import newest_first

StoredStatus = Literal["pending", "running", "executed", "rejected"]

INDEXES = [
    IndexModel([("workspaceId", ASCENDING), ("createdAt", DESCENDING)], name="workspace_created"),
]


def new_request_id() -> str:
    return new_id("apr")


class Approvals:
    """The ``approval_requests`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["approval_requests"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def create(
        self,
        workspace_id: str,
        *,
        slug: str,
        input: dict[str, Any],
        title: str,
        description: str,
        requester: dict[str, Any],
        request_id: str | None = None,
    ) -> dict[str, Any]:
        """Store a pending request for the validated call ``slug(input)`` by ``requester``
        (``request_id``: an id made beforehand with ``new_request_id``, for a call whose input
        names its own request)."""
        record: dict[str, Any] = {
            "_id": request_id or new_request_id(),
            "workspaceId": workspace_id,
            "status": "pending",
            "capabilitySlug": slug,
            "input": input,
            "title": title,
            "description": description,
            "requestedBy": requester["userId"],
            "requester": requester,
            "createdAt": utcnow(),
            "resolvedBy": None,
            "resolvedAt": None,
            "rejectionMessage": None,
            "result": None,
            "lastError": None,
        }
        await self._col.insert_one(record)
        return record

    async def get(self, workspace_id: str, request_id: str) -> dict[str, Any] | None:
        return cast(
            dict[str, Any] | None,
            await self._col.find_one({"_id": request_id, "workspaceId": workspace_id}),
        )

    async def page(
        self,
        workspace_id: str,
        *,
        statuses: list[str] | None,
        hidden_slugs: list[str],
        requested_by: str | None,
        limit: int,
        after_row: tuple[Any, str] | None = None,
    ) -> list[dict[str, Any]]:
        """Requests newest first (ties by id): of ``statuses`` (all when None), gating none of
        ``hidden_slugs``, asked by ``requested_by`` when given; those after ``after_row``
        (createdAt, id) when paging on."""
        query: dict[str, Any] = {
            "workspaceId": workspace_id,
            "capabilitySlug": {"$nin": hidden_slugs},
        }
        if statuses is not None:
            query["status"] = {"$in": statuses}
        if requested_by is not None:
            query["requestedBy"] = requested_by
        return await newest_first(self._col, query, limit, after_row)

    async def unresolved(
        self, workspace_id: str, slug: str, key: str, values: list[str], limit: int = 20
    ) -> dict[str, list[str]]:
        """The ids of the pending (or running) requests for ``slug`` whose ``input[key]`` is one
        of ``values``, oldest first, at most ``limit`` per value."""
        found: dict[str, list[str]] = {}
        if not values:
            return found
        cursor = self._col.find(
            {
                "workspaceId": workspace_id,
                "capabilitySlug": slug,
                "status": {"$in": ["pending", "running"]},
                f"input.{key}": {"$in": values},
            },
            {"_id": 1, "input": 1},
        ).sort([("createdAt", ASCENDING), ("_id", ASCENDING)])
        async for row in cursor:
            ids = found.setdefault(row["input"][key], [])
            if len(ids) < limit:
                ids.append(row["_id"])
        return found

    async def _from_pending(
        self, workspace_id: str, request_id: str, changes: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Apply ``changes`` to the request only while it is pending, atomically (of two
        concurrent approvals or rejections one wins); the request after, or None."""
        return cast(
            dict[str, Any] | None,
            await self._col.find_one_and_update(
                {"_id": request_id, "workspaceId": workspace_id, "status": "pending"},
                {"$set": changes},
                return_document=ReturnDocument.AFTER,
            ),
        )

    async def claim(self, workspace_id: str, request_id: str, by: str) -> dict[str, Any] | None:
        """Take a pending request for running; None when it is not pending (any more)."""
        return await self._from_pending(
            workspace_id, request_id, {"status": "running", "resolvedBy": by, "claimedAt": utcnow()}
        )

    async def executed(self, workspace_id: str, request_id: str, result: dict[str, Any]) -> None:
        await self._col.update_one(
            {"_id": request_id, "workspaceId": workspace_id, "status": "running"},
            {
                "$set": {
                    "status": "executed",
                    "result": result,
                    "resolvedAt": utcnow(),
                    "lastError": None,
                }
            },
        )

    async def release(self, workspace_id: str, request_id: str, error: str) -> None:
        """The run failed before doing anything: pending again, with the reason."""
        await self._col.update_one(
            {"_id": request_id, "workspaceId": workspace_id, "status": "running"},
            {"$set": {"status": "pending", "resolvedBy": None, "lastError": error[:1000]}},
        )

    async def reject(
        self, workspace_id: str, request_id: str, by: str, message: str | None
    ) -> dict[str, Any] | None:
        """Reject a pending request; None when it is not pending."""
        return await self._from_pending(
            workspace_id,
            request_id,
            {
                "status": "rejected",
                "resolvedBy": by,
                "resolvedAt": utcnow(),
                "rejectionMessage": message,
            },
        )
