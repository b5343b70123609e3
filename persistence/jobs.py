"""Durable jobs with leases: how processing survives crashes and scales to many workers.

A worker claims a job atomically (``find_one_and_update``): a queued job whose time has come, or
a running job whose lease has expired (its worker died). While working it renews the lease; when
done it completes the job, and on failure the job goes back to the queue with exponential
backoff until its attempts are used up. Completion and failure only apply while the worker
still owns the lease, so a worker that lost its job to another cannot overwrite the result.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel, ReturnDocument

from persistence.ids import new_id, utcnow

JobStatus = Literal["queued", "running", "done", "dead"]

INDEXES = [
    IndexModel([("status", ASCENDING), ("runAfter", ASCENDING)], name="status_run_after"),
    IndexModel([("status", ASCENDING), ("leaseUntil", ASCENDING)], name="status_lease"),
    IndexModel([("workspaceId", ASCENDING), ("documentId", ASCENDING)], name="workspace_document"),
]
BASE_BACKOFF_S = 2.0
MAX_BACKOFF_S = 300.0


class Jobs:
    """The ``jobs`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self._col = db["jobs"]

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    async def enqueue(
        self, workspace_id: str, kind: str, payload: dict[str, Any], max_attempts: int = 5
    ) -> dict[str, Any]:
        now = utcnow()
        job = {
            "_id": new_id("job"),
            "workspaceId": workspace_id,
            "kind": kind,
            "payload": payload,
            "status": "queued",
            "attempts": 0,
            "maxAttempts": max_attempts,
            "runAfter": now,
            "leaseOwner": None,
            "leaseUntil": None,
            "lastError": None,
            "createdAt": now,
            "updatedAt": now,
        }
        await self._col.insert_one(job)
        return job

    async def claim(self, owner: str, lease_s: float) -> dict[str, Any] | None:
        """Take the next due job (or one whose lease expired) for ``lease_s`` seconds."""
        now = utcnow()
        job = await self._col.find_one_and_update(
            {
                "$or": [
                    {"status": "queued", "runAfter": {"$lte": now}},
                    {"status": "running", "leaseUntil": {"$lt": now}},
                ]
            },
            {
                "$set": {
                    "status": "running",
                    "leaseOwner": owner,
                    "leaseUntil": now + timedelta(seconds=lease_s),
                    "updatedAt": now,
                },
                "$inc": {"attempts": 1},
            },
            sort=[("runAfter", ASCENDING), ("_id", ASCENDING)],
            return_document=ReturnDocument.AFTER,
        )
        return dict(job) if job else None

    async def renew(self, job_id: str, owner: str, lease_s: float) -> bool:
        """Extend the lease; False when the job is no longer ours."""
        now = utcnow()
        result = await self._col.update_one(
            {"_id": job_id, "status": "running", "leaseOwner": owner},
            {"$set": {"leaseUntil": now + timedelta(seconds=lease_s), "updatedAt": now}},
        )
        return result.modified_count == 1

    async def complete(self, job_id: str, owner: str) -> bool:
        result = await self._col.update_one(
            {"_id": job_id, "status": "running", "leaseOwner": owner},
            {
                "$set": {
                    "status": "done",
                    "leaseOwner": None,
                    "leaseUntil": None,
                    "updatedAt": utcnow(),
                }
            },
        )
        return result.modified_count == 1

    async def fail(self, job_id: str, owner: str, error: str) -> JobStatus | None:
        """Requeue with backoff, or mark dead after the last attempt; the new status."""
        job = await self._col.find_one({"_id": job_id, "status": "running", "leaseOwner": owner})
        if job is None:
            return None
        now = utcnow()
        dead = job["attempts"] >= job["maxAttempts"]
        delay = min(MAX_BACKOFF_S, BASE_BACKOFF_S * 2 ** (job["attempts"] - 1))
        status: JobStatus = "dead" if dead else "queued"
        await self._col.update_one(
            {"_id": job_id, "leaseOwner": owner},
            {
                "$set": {
                    "status": status,
                    "leaseOwner": None,
                    "leaseUntil": None,
                    "runAfter": now + timedelta(seconds=delay),
                    "lastError": error[:2000],
                    "updatedAt": now,
                }
            },
        )
        return status

    async def get(self, job_id: str) -> dict[str, Any] | None:
        return await self._col.find_one({"_id": job_id})

    async def pending_count(self) -> int:
        return int(await self._col.count_documents({"status": {"$in": ["queued", "running"]}}))
