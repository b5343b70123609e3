"""Durable jobs with leases: how processing survives crashes and scales to many workers.

A worker claims a job atomically (an update that applies only while the job is as the worker read
it): a queued job whose time has come, or a running job whose lease has expired (its worker
died). While working it renews the lease; when
done it completes the job (or, for periodic work, queues the same job again for a later time),
and on failure the job goes back to the queue with exponential backoff until its attempts are
used up. Completion and failure only apply while the worker still owns the lease, so a worker
that lost its job to another cannot overwrite the result.

A job may carry a dedupe key: while a job with that key is queued or running, enqueueing another
one with the same key returns the existing job instead (a unique index over ``activeKey``, a
field only queued and running jobs carry), so periodic work cannot pile up. This module is the
only one that knows the jobs collection; its clock is injectable so tests control lease expiry.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal, NotRequired, TypedDict, cast

from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from persistence.ids import new_id, utcnow

JobStatus = Literal["queued", "running", "done", "dead"]
Clock = Callable[[], datetime]

INDEXES = [
    IndexModel([("status", ASCENDING), ("runAfter", ASCENDING)], name="status_run_after"),
    IndexModel([("status", ASCENDING), ("leaseUntil", ASCENDING)], name="status_lease"),
    IndexModel([("workspaceId", ASCENDING), ("documentId", ASCENDING)], name="workspace_document"),
    # At most one queued or running job per dedupe key. Sparse (only jobs that carry the field)
    # rather than partial: the in-memory test store ignores partial filters.
    IndexModel([("activeKey", ASCENDING)], unique=True, sparse=True, name="active_key_unique"),
]
BASE_BACKOFF_S = 2.0
MAX_BACKOFF_S = 300.0
DEFAULT_MAX_ATTEMPTS = 5
# Claims lost to other workers before this poll gives up (the next poll tries again).
CLAIM_ATTEMPTS = 5


class JobRecord(TypedDict):
    """A job as stored."""

    _id: str
    workspaceId: str
    kind: str
    payload: dict[str, Any]
    status: JobStatus
    attempts: int
    maxAttempts: int
    runAfter: datetime
    leaseOwner: str | None
    leaseUntil: datetime | None
    lastError: str | None
    createdAt: datetime
    updatedAt: datetime
    dedupeKey: NotRequired[str]
    activeKey: NotRequired[str]  # the dedupe key, while the job is queued or running


class Jobs:
    """The ``jobs`` collection."""

    def __init__(self, db: AsyncIOMotorDatabase, clock: Clock = utcnow) -> None:
        self._col = db["jobs"]
        self._now = clock

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)

    def now(self) -> datetime:
        """Now, by this collection's clock (due work compares against it)."""
        return self._now()

    async def enqueue(
        self,
        workspace_id: str,
        kind: str,
        payload: dict[str, Any],
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        run_after: datetime | None = None,
        dedupe_key: str | None = None,
    ) -> JobRecord:
        """Queue a job of ``kind`` (due at ``run_after``, else now).

        With ``dedupe_key``, a queued or running job with the same key is returned instead of a
        new one. (A job that wants to run again later returns ``run_again_at`` to ``complete``
        rather than enqueueing itself: its own key is still active while it runs.)
        """
        now = self._now()
        job: JobRecord = {
            "_id": new_id("job"),
            "workspaceId": workspace_id,
            "kind": kind,
            "payload": payload,
            "status": "queued",
            "attempts": 0,
            "maxAttempts": max_attempts,
            "runAfter": run_after or now,
            "leaseOwner": None,
            "leaseUntil": None,
            "lastError": None,
            "createdAt": now,
            "updatedAt": now,
        }
        if dedupe_key is not None:
            job["dedupeKey"] = job["activeKey"] = dedupe_key
        try:
            await self._col.insert_one(job)
        except DuplicateKeyError:
            existing = await self._col.find_one({"activeKey": dedupe_key})
            if existing is None:  # it finished between the insert and the read: try again
                return await self.enqueue(
                    workspace_id,
                    kind,
                    payload,
                    max_attempts=max_attempts,
                    run_after=run_after,
                    dedupe_key=dedupe_key,
                )
            return cast(JobRecord, existing)
        return job

    async def claim(self, owner: str, lease_s: float) -> JobRecord | None:
        """Take the next due job (or one whose lease expired) for ``lease_s`` seconds.

        The earliest of two indexed reads (due queued jobs by ``status_run_after``, expired
        leases by ``status_lease``) is taken with an update that applies only while the job is
        as read (compare and set: of two workers, one wins and the other looks again). Not one
        ``find_one_and_update`` with a top-level ``$or``: the embedded store plans neither and
        scans every job ever run, twice (1.2 s a claim with 5,000 finished jobs).
        """
        now = self._now()
        order = [("runAfter", ASCENDING), ("_id", ASCENDING)]
        for _ in range(CLAIM_ATTEMPTS):
            candidates = [
                found
                for branch in (
                    {"status": "queued", "runAfter": {"$lte": now}},
                    {"status": "running", "leaseUntil": {"$lt": now}},
                )
                for found in await self._col.find(branch).sort(order).limit(1).to_list(1)
            ]
            if not candidates:
                return None
            job = min(candidates, key=lambda found: (found["runAfter"], found["_id"]))
            taken = {
                "status": "running",
                "leaseOwner": owner,
                "leaseUntil": now + timedelta(seconds=lease_s),
                "updatedAt": now,
            }
            as_read = {
                name: job.get(name)
                for name in ("status", "attempts", "runAfter", "leaseOwner", "leaseUntil")
            }
            result = await self._col.update_one(
                {"_id": job["_id"], **as_read}, {"$set": taken, "$inc": {"attempts": 1}}
            )
            if result.matched_count:
                return cast(JobRecord, {**job, **taken, "attempts": job["attempts"] + 1})
        return None  # other workers took every job this one looked at: its next poll retries

    async def renew(self, job_id: str, owner: str, lease_s: float) -> bool:
        """Extend the lease; False when the job is no longer ours."""
        now = self._now()
        result = await self._col.update_one(
            {"_id": job_id, "status": "running", "leaseOwner": owner},
            {"$set": {"leaseUntil": now + timedelta(seconds=lease_s), "updatedAt": now}},
        )
        return result.modified_count == 1

    async def complete(self, job_id: str, owner: str, run_again_at: datetime | None = None) -> bool:
        """Finish the job; with ``run_again_at`` the same job is queued again for then (its
        attempts start over and its dedupe key stays active). False when it is not ours."""
        now = self._now()
        if run_again_at is None:
            update: dict[str, Any] = {
                "$set": {
                    "status": "done",
                    "leaseOwner": None,
                    "leaseUntil": None,
                    "updatedAt": now,
                },
                "$unset": {"activeKey": ""},
            }
        else:
            update = {
                "$set": {
                    "status": "queued",
                    "attempts": 0,
                    "runAfter": run_again_at,
                    "leaseOwner": None,
                    "leaseUntil": None,
                    "lastError": None,
                    "updatedAt": now,
                }
            }
        result = await self._col.update_one(
            {"_id": job_id, "status": "running", "leaseOwner": owner}, update
        )
        return result.modified_count == 1

    async def fail(self, job_id: str, owner: str, error: str) -> JobStatus | None:
        """Requeue with backoff, or mark dead after the last attempt; the new status."""
        job = await self._col.find_one({"_id": job_id, "status": "running", "leaseOwner": owner})
        if job is None:
            return None
        now = self._now()
        dead = job["attempts"] >= job["maxAttempts"]
        delay = min(MAX_BACKOFF_S, BASE_BACKOFF_S * 2 ** (job["attempts"] - 1))
        status: JobStatus = "dead" if dead else "queued"
        update: dict[str, Any] = {
            "$set": {
                "status": status,
                "leaseOwner": None,
                "leaseUntil": None,
                "runAfter": now + timedelta(seconds=delay),
                "lastError": error[:2000],
                "updatedAt": now,
            }
        }
        if dead:
            update["$unset"] = {"activeKey": ""}  # a later enqueue of the key starts afresh
        await self._col.update_one({"_id": job_id, "leaseOwner": owner}, update)
        return status

    async def get(self, job_id: str) -> JobRecord | None:
        return cast(JobRecord | None, await self._col.find_one({"_id": job_id}))

    async def pending_count(self) -> int:
        return int(await self._col.count_documents({"status": {"$in": ["queued", "running"]}}))
