"""Durable jobs with leases: how processing survives crashes, scales to many workers and stays
fair between workspaces.

A worker claims a job atomically (an update that applies only while the job is as the worker read
it). While working it renews the lease; when done it completes the job (or, for periodic work,
queues the same job again for a later time), and on failure the job goes back to the queue with
exponential backoff until its attempts are used up. Completion and failure only apply while the
worker still owns the lease, so a worker that lost its job to another cannot overwrite the
result.

**Fair claiming.** Which job comes next is decided per workspace, not per job: each workspace
with queued work has one small record in ``job_queues`` (when its earliest queued job is due,
``dueAt``, and when a worker last took one of its jobs, ``served``). A claim goes to the due
workspace served longest ago (round robin), skipping any that already runs its
``per_workspace`` limit of jobs, and takes that workspace's oldest due job (queued order within
a workspace: ``runAfter``, then ``seq``, the order of enqueueing). So a workspace that queued 500
jobs gets one turn like any other: another workspace's new upload is taken at the next claim,
not after the 500. ``dueAt`` is a hint kept low (``$min`` on every job queued); a claim that
finds nothing behind it recomputes it, guarded by a version number so that a job queued
meanwhile is never hidden. Should a hint still be lost (a crash between the two writes of an
enqueue), ``repair_queues`` at start-up, and any claim that finds nothing through the hints,
restore it from the jobs themselves.

**Dead workers.** A live worker renews its leases several times per lease (its heartbeat), so a
lease expires only when its worker stopped: the next claim of any worker takes that job first,
before any queued one (it keeps its place). Every worker process also takes back, every few
seconds, the leases of owners on its host that are gone (``take_back_leases``; owners are named
by ``persistence.lease_owners``), queued again with their turn unchanged.

A job may carry a dedupe key: while a job with that key is queued or running, enqueueing another
one with the same key returns the existing job instead (a unique index over ``activeKey``, a
field only queued and running jobs carry), so periodic work cannot pile up. This module is the
only one that knows the jobs collection; its clock is injectable so tests control lease expiry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, NotRequired, TypedDict, cast

from bson import ObjectId
from motor.motor_asyncio import AsyncIOMotorDatabase
from pymongo import ASCENDING, IndexModel
from pymongo.errors import DuplicateKeyError

from persistence.durability import journaled
from persistence.ids import new_id, utcnow
from persistence.lease_owners import LeaseOwner
from persistence.units import after_commit, joined

JobStatus = Literal["queued", "running", "done", "dead"]
Clock = Callable[[], datetime]

INDEXES = [
    IndexModel([("status", ASCENDING), ("runAfter", ASCENDING)], name="status_run_after"),
    IndexModel([("status", ASCENDING), ("leaseUntil", ASCENDING)], name="status_lease"),
    IndexModel([("workspaceId", ASCENDING), ("documentId", ASCENDING)], name="workspace_document"),
    # A workspace's oldest due job and its count of running ones (the range field last: the
    # embedded store drops an inclusive bound on a range field that is not the last key).
    IndexModel(
        [("workspaceId", ASCENDING), ("status", ASCENDING), ("runAfter", ASCENDING)],
        name="workspace_status_run_after",
    ),
    # At most one queued or running job per dedupe key. Sparse (only jobs that carry the field)
    # rather than partial: the in-memory test store ignores partial filters.
    IndexModel([("activeKey", ASCENDING)], unique=True, sparse=True, name="active_key_unique"),
]
QUEUE_INDEXES = [IndexModel([("dueAt", ASCENDING)], name="due")]
BASE_BACKOFF_S = 2.0
MAX_BACKOFF_S = 300.0
DEFAULT_MAX_ATTEMPTS = 5
# Claims lost to other workers before this poll gives up (the next poll tries again).
CLAIM_ATTEMPTS = 5
# "Nothing queued": later than any job's time, so ``$min`` with a real time replaces it.
NOTHING_DUE = datetime(9999, 1, 1, tzinfo=UTC)
# Turns are ordered by ``ObjectId``s, not times: a claim's is larger than any earlier claim's of
# the same process (and of other processes in earlier seconds), where two times would tie within
# a millisecond.
NEVER_SERVED = ObjectId("0" * 24)


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
    seq: NotRequired[ObjectId]  # enqueue order (jobs queued before it existed have none)
    leaseOwner: str | None
    leaseUntil: datetime | None
    lastError: str | None
    createdAt: datetime
    updatedAt: datetime
    dedupeKey: NotRequired[str]
    activeKey: NotRequired[str]  # the dedupe key, while the job is queued or running


class Jobs:
    """The ``jobs`` collection and its per-workspace queue records (``job_queues``)."""

    def __init__(self, db: AsyncIOMotorDatabase, clock: Clock = utcnow) -> None:
        # Joined: an intake queues its jobs in one unit with its documents (persistence.units).
        self._col = joined(db["jobs"])
        # A queued job is part of an acknowledged intake: it is written to the journal.
        self._durable = joined(journaled(db["jobs"]))
        self._queues = joined(db["job_queues"])
        self._now = clock

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)
        await self._queues.create_indexes(QUEUE_INDEXES)

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
            "seq": ObjectId(),  # increasing within a process: a message's jobs keep its order
            "leaseOwner": None,
            "leaseUntil": None,
            "lastError": None,
            "createdAt": now,
            "updatedAt": now,
        }
        if dedupe_key is not None:
            job["dedupeKey"] = job["activeKey"] = dedupe_key
        try:
            await self._durable.insert_one(job)
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
        # After the insert: a claim that reads the hint before this finds the job, or has its
        # recomputation refused by the version this bumps. In a unit, once it is committed: the
        # workspace's hint is every claim's record, not to be held by a transaction (a lost
        # hint is restored from the jobs).
        hint = after_commit(functools.partial(self._mark_due, workspace_id, job["runAfter"]))
        if hint is not None:
            await hint
        return job

    async def _mark_due(self, workspace_id: str, run_after: datetime) -> None:
        """The workspace has a job queued for ``run_after``."""
        await self._queues.update_one(
            {"_id": workspace_id},
            {
                "$min": {"dueAt": run_after},
                "$inc": {"version": 1},
                "$setOnInsert": {"served": NEVER_SERVED},
            },
            upsert=True,
        )

    async def claim(
        self,
        owner: str,
        lease_s: float,
        *,
        per_workspace: int | None = None,
        passing_over: Collection[str] = (),
    ) -> JobRecord | None:
        """Take the next job for ``lease_s`` seconds: one whose lease expired (its worker died),
        else the oldest due job of the due workspace served longest ago that runs fewer than
        ``per_workspace`` jobs (None: no limit) and is not one of ``passing_over`` (a pool's
        last free worker passes over the workspaces it is already working for). None when
        there is nothing to take."""
        now = self._now()
        for _ in range(CLAIM_ATTEMPTS):
            expired = await self._oldest({"status": "running", "leaseUntil": {"$lt": now}})
            if expired is not None:
                taken = await self._take(expired, owner, lease_s, now)
                if taken is not None:
                    return taken
                continue
            outcome = await self._claim_fairly(owner, lease_s, now, per_workspace, passing_over)
            if outcome == "lost":
                continue  # another worker took the job this one chose: look again
            if outcome is not None:
                return outcome
            if not await self._repair_hint(now):
                return None
        return None  # other workers took every job this one looked at: its next poll retries

    async def _claim_fairly(
        self,
        owner: str,
        lease_s: float,
        now: datetime,
        per_workspace: int | None,
        passing_over: Collection[str] = (),
    ) -> JobRecord | Literal["lost"] | None:
        queues = self._queues.find({"dueAt": {"$lte": now}}).sort(
            [("served", ASCENDING), ("_id", ASCENDING)]
        )
        async for queue in queues:
            workspace_id = queue["_id"]
            if workspace_id in passing_over:
                continue
            if per_workspace is not None and await self.running(workspace_id) >= per_workspace:
                continue
            job = await self._oldest(
                {"workspaceId": workspace_id, "status": "queued", "runAfter": {"$lte": now}}
            )
            if job is None:
                await self._recompute_due(workspace_id, queue.get("version"))
                continue
            taken = await self._take(job, owner, lease_s, now)
            if taken is None:
                return "lost"
            await self._queues.update_one(
                {"_id": workspace_id}, {"$set": {"served": ObjectId(), "servedAt": now}}
            )
            if per_workspace is not None and await self.running(workspace_id) > per_workspace:
                # Several workers claimed for this workspace at once: the last ones give back.
                await self._release(taken, owner)
                continue
            return taken
        return None

    async def _oldest(self, selector: dict[str, Any]) -> JobRecord | None:
        order = [("runAfter", ASCENDING), ("seq", ASCENDING), ("_id", ASCENDING)]
        if selector.get("status") == "running":
            order = [("leaseUntil", ASCENDING), ("_id", ASCENDING)]
        found = await self._col.find(selector).sort(order).limit(1).to_list(1)
        return cast(JobRecord, found[0]) if found else None

    async def _take(
        self, job: JobRecord, owner: str, lease_s: float, now: datetime
    ) -> JobRecord | None:
        """Compare and set: the job becomes ``owner``'s only while it is as read."""
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
        if not result.matched_count:
            return None
        return cast(JobRecord, {**job, **taken, "attempts": job["attempts"] + 1})

    async def _release(self, job: JobRecord, owner: str) -> None:
        """Give a just-claimed job back untouched (its attempt not counted)."""
        result = await self._col.update_one(
            {"_id": job["_id"], "status": "running", "leaseOwner": owner},
            {
                "$set": {"status": "queued", "leaseOwner": None, "leaseUntil": None},
                "$inc": {"attempts": -1},
            },
        )
        if result.modified_count:
            await self._mark_due(job["workspaceId"], job["runAfter"])

    async def _recompute_due(self, workspace_id: str, version: int | None) -> None:
        """The hint of a workspace whose due work is gone: its next queued job's time, unless
        a job was queued since the hint was read (the version moved)."""
        following = await self._oldest({"workspaceId": workspace_id, "status": "queued"})
        due = following["runAfter"] if following is not None else NOTHING_DUE
        await self._queues.update_one(
            {"_id": workspace_id, "version": version}, {"$set": {"dueAt": due}}
        )

    async def _repair_hint(self, now: datetime) -> bool:
        """Whether a due job had no hint (it has one now): the claim then looks again."""
        job = await self._oldest({"status": "queued", "runAfter": {"$lte": now}})
        if job is None:
            return False
        queue = await self._queues.find_one({"_id": job["workspaceId"]})
        if queue is not None and queue.get("dueAt", NOTHING_DUE) <= now:
            return False  # it has one: its workspace is at its limit
        await self._mark_due(job["workspaceId"], job["runAfter"])
        return True

    async def running(self, workspace_id: str) -> int:
        """How many of the workspace's jobs are running now."""
        return int(
            await self._col.count_documents({"workspaceId": workspace_id, "status": "running"})
        )

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
        if result.modified_count != 1:
            return False
        if run_again_at is not None:
            job = await self._col.find_one({"_id": job_id}, {"workspaceId": 1})
            if job is not None:
                await self._mark_due(job["workspaceId"], run_again_at)
        return True

    async def fail(
        self, job_id: str, owner: str, error: str, *, final: bool = False
    ) -> JobStatus | None:
        """Requeue with backoff, or mark dead after the last attempt (or at once when
        ``final``: trying again cannot help); the new status."""
        job = await self._col.find_one({"_id": job_id, "status": "running", "leaseOwner": owner})
        if job is None:
            return None
        now = self._now()
        dead = final or job["attempts"] >= job["maxAttempts"]
        delay = min(MAX_BACKOFF_S, BASE_BACKOFF_S * 2 ** (job["attempts"] - 1))
        status: JobStatus = "dead" if dead else "queued"
        run_after = now + timedelta(seconds=delay)
        update: dict[str, Any] = {
            "$set": {
                "status": status,
                "leaseOwner": None,
                "leaseUntil": None,
                "runAfter": run_after,
                "lastError": error[:2000],
                "updatedAt": now,
            }
        }
        if dead:
            update["$unset"] = {"activeKey": ""}  # a later enqueue of the key starts afresh
        await self._col.update_one({"_id": job_id, "leaseOwner": owner}, update)
        if not dead:
            await self._mark_due(job["workspaceId"], run_after)
        return status

    async def take_back_leases(self, gone: Callable[[str], bool]) -> int:
        """Queue again the running jobs whose lease owner is ``gone`` (a process that died
        holding them), in their place: due when they were due, before the workspace's jobs
        queued after them; how many. Their attempt stays counted."""
        now = self._now()
        taken = 0
        for job in await self._col.find({"status": "running"}).to_list(None):
            owner = job.get("leaseOwner")
            if not isinstance(owner, str) or not gone(owner):
                continue
            result = await self._col.update_one(
                {"_id": job["_id"], "status": "running", "leaseOwner": owner},
                {
                    "$set": {
                        "status": "queued",
                        "leaseOwner": None,
                        "leaseUntil": None,
                        "lastError": f"its worker ({owner}) died",
                        "updatedAt": now,
                    }
                },
            )
            if result.modified_count:
                taken += 1
                await self._mark_due(job["workspaceId"], min(job["runAfter"], now))
        return taken

    async def repair_queues(self) -> int:
        """Give every workspace with queued jobs a hint no later than its earliest one (lost
        only by a crash between an enqueue's two writes); how many workspaces have queued
        work."""
        earliest: dict[str, datetime] = {}
        cursor = self._col.find({"status": "queued"}, {"workspaceId": 1, "runAfter": 1})
        async for job in cursor:
            known = earliest.get(job["workspaceId"])
            if known is None or job["runAfter"] < known:
                earliest[job["workspaceId"]] = job["runAfter"]
        for workspace_id, run_after in earliest.items():
            await self._mark_due(workspace_id, run_after)
        return len(earliest)

    async def live_payload_values(self, kinds: Collection[str], field: str) -> set[Any]:
        """``payload[field]`` of every queued or running job of one of ``kinds`` (a start-up
        check: which documents have a job on its way)."""
        found: set[Any] = set()
        for status in ("queued", "running"):
            cursor = self._col.find({"status": status}, {"kind": 1, f"payload.{field}": 1})
            async for job in cursor:
                if job.get("kind") in kinds and field in (job.get("payload") or {}):
                    found.add(job["payload"][field])
        return found

    async def get(self, job_id: str) -> JobRecord | None:
        return cast(JobRecord | None, await self._col.find_one({"_id": job_id}))

    async def pending_count(self) -> int:
        return int(await self._col.count_documents({"status": {"$in": ["queued", "running"]}}))


def owner_gone(owner: str) -> bool:
    """Whether the process behind lease owner ``owner`` is known to have ended."""
    process = LeaseOwner.of(owner)
    return process is not None and process.gone()
