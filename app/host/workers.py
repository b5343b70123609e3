"""Job workers: inside ``fincap serve`` (a few asyncio tasks) or as ``fincap worker`` processes.

Each worker loops: claim a job (an atomic lease in MongoDB, fair between workspaces, at most
``per_workspace`` running per workspace), run its kind's handler (``resolvers.framework.job_kinds``)
while renewing the lease, then complete it (or queue it again when the handler asks to run again
later), or fail it so it is retried with backoff; after the last attempt the kind's give-up hook
runs. A worker that dies leaves its lease behind: a process starting on the same host takes it back
at once (``resolvers.services.processing.recovery``), any other worker once it expires. Beside its
workers, a pool sweeps every few seconds for what crashed processes left (intakes on their way in,
leases of dead processes of this host), and a worker renews its lease four times per lease. A job
whose workers died more often than its attempts allow is given up without running it again, so a
file that kills its worker cannot do so forever.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from app.host.observability import request_id_scope
from persistence.errors import store_error_of
from persistence.jobs import JobRecord
from persistence.lease_owners import LeaseOwner
from resolvers.framework.job_kinds import JobKinds, RunAgain
from resolvers.framework.services import Services
from resolvers.services.processing.intake import SWEEP_EVERY_S
from resolvers.services.processing.recovery import sweep

log = logging.getLogger("fincap.workers")
T = TypeVar("T")
# Renewals per lease: one missed (a slow store) still leaves the lease standing.
HEARTBEATS_PER_LEASE = 4


class JobTimedOut(Exception):
    """The job ran past the pool's time limit and was stopped."""


# How long a stopping process lets the jobs in hand finish: a process must stop within 10 s
# (a supervisor's SIGKILL follows), and the store may be away, where every write waits out
# its timeout before failing.
STOP_GRACE_S = 3.0


class WorkerPool:
    """``count`` workers running the job kinds ``kinds`` over the store of ``services``.

    ``pool.services`` are ``services`` with ``wake_workers`` pointing at this pool, for the
    faces of the same process (a queued upload starts at once instead of at the next poll).

    Per tenant, a pool of two or more workers keeps its last free worker for a workspace it is
    not already working for: one workspace's backlog runs on at most ``count - 1`` of them,
    and another workspace's new job starts at once instead of after one of the backlog's (with
    ``per_workspace``, the limit over all processes, on top). A job runs for at most
    ``time_limit_s``: then it is stopped (an analysis it waits for too, in its process) and
    failed with the reason: retried later, or given up at once for kinds that say so.
    """

    def __init__(
        self,
        services: Services,
        kinds: JobKinds,
        *,
        count: int = 1,
        lease_s: float = 10.0,
        poll_s: float = 1.0,
        per_workspace: int | None = None,
        time_limit_s: float | None = None,
        on_job: Callable[[str, str], None] | None = None,
    ) -> None:
        self.services = dataclasses.replace(services, wake_workers=self.wake)
        self.store = services.store
        self.kinds = kinds
        self.count = count
        self.lease_s = lease_s
        self._on_job = on_job or (lambda kind, outcome: None)
        self.poll_s = poll_s
        self.per_workspace = per_workspace
        self.time_limit_s = time_limit_s
        self.process = LeaseOwner.current()
        # The workspace each of this pool's workers is working for (claims one at a time, so
        # the last free worker knows what the others took).
        self._serving: dict[str, str] = {}
        self._claiming = asyncio.Lock()
        self._wake = asyncio.Event()
        self._wake_sweep = asyncio.Event()  # set to stop the sweep at once
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False

    def wake(self) -> None:
        """A job was queued: stop waiting for the next poll."""
        self._wake.set()

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._loop(self.process.worker(i))) for i in range(self.count)
        ]
        self._tasks.append(asyncio.create_task(self._sweep_loop()))

    async def _sweep_loop(self) -> None:
        """Every ``SWEEP_EVERY_S``: settle what crashed processes left (``recovery.sweep``)."""
        while not self._stopping:
            self._wake_sweep.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake_sweep.wait(), timeout=SWEEP_EVERY_S)
            if self._stopping:
                return
            try:
                await sweep(self.services)
            except Exception:
                log.exception("sweep failed; the next one tries again")

    async def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Finish the jobs in hand within ``grace_s``, then stop; a job still running then is
        interrupted (its lease is taken back by the next start on this host, or by another
        worker when it expires, and it runs again: jobs are written to be repeated)."""
        self._stopping = True
        self._wake.set()
        self._wake_sweep.set()
        if not self._tasks:
            return
        _, running = await asyncio.wait(self._tasks, timeout=grace_s)
        if running:
            log.warning(
                "stopping: jobs still running are interrupted", extra={"jobs": len(running)}
            )
        for task in running:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def run_until_idle(self, owner: str = "drain") -> int:
        """Process jobs until none is due; how many ran (for tests and one-shot workers)."""
        ran = 0
        while await self.run_one(owner):
            ran += 1
        return ran

    async def _loop(self, owner: str) -> None:
        while not self._stopping:
            try:
                worked = await self.run_one(owner)
            except Exception as exc:
                if store_error_of(exc) is not None:
                    # The store is away: wait a poll and ask again (no traceback per poll).
                    log.warning("worker: store unavailable", extra={"error": type(exc).__name__})
                else:
                    log.exception("worker loop error")
                worked = False
            if not worked and not self._stopping:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=self.poll_s)

    async def run_one(self, owner: str) -> bool:
        """Claim and run one job; False when none is due."""
        async with self._claiming:
            job = await self.store.jobs.claim(
                owner,
                self.lease_s,
                per_workspace=self.per_workspace,
                passing_over=self._kept_for_others(owner),
            )
            if job is None:
                return False
            self._serving[owner] = job["workspaceId"]
        try:
            with request_id_scope(job.get("payload", {}).get("requestId") or job["_id"]):
                await self._run_job(job, owner)
        finally:
            self._serving.pop(owner, None)
        return True

    def _kept_for_others(self, owner: str) -> frozenset[str]:
        """The workspaces ``owner`` passes over: those the pool works for, when ``owner`` is the
        last free one of two or more workers."""
        others = {worker: ws for worker, ws in self._serving.items() if worker != owner}
        if self.count < 2 or len(others) < self.count - 1:
            return frozenset()
        return frozenset(others.values())

    async def _run_job(self, job: JobRecord, owner: str) -> None:
        """Run the job's handler while renewing its lease; complete it, or fail it for a retry."""
        kind = self.kinds.get(job["kind"])
        renewer = asyncio.create_task(self._keep_lease(job["_id"], owner))
        try:
            if kind is None:
                raise RuntimeError(f"no handler for job kind {job['kind']!r}")
            if job["attempts"] > job["maxAttempts"]:
                # Taken back from dead workers more often than it may be tried.
                raise RuntimeError(
                    f"the worker running it stopped without finishing {job['attempts'] - 1} "
                    "times (it may need more memory than the worker has)"
                )
            outcome = await self._within_time_limit(kind.handler(self.services, job))
        except Exception as exc:
            log.warning(
                "job failed",
                extra={"jobId": job["_id"], "attempt": job["attempts"], "error": repr(exc)},
            )
            # Stopped at the limit, a kind that would take as long again is given up at once.
            timed_out = isinstance(exc, JobTimedOut)
            final = timed_out and kind is not None and not kind.retry_after_time_limit
            status = await self.store.jobs.fail(job["_id"], owner, repr(exc), final=final)
            if status == "dead" and kind is not None and kind.on_give_up is not None:
                # The reason people read (processingReason): the message, not the repr.
                await kind.on_give_up(self.services, job, str(exc) or type(exc).__name__)
            self._on_job(job["kind"], "dead" if status == "dead" else "retry")
        else:
            run_again_at = outcome.at if isinstance(outcome, RunAgain) else None
            await self.store.jobs.complete(job["_id"], owner, run_again_at)
            self._on_job(job["kind"], "done")
        finally:
            renewer.cancel()

    async def _within_time_limit(self, handling: Awaitable[T]) -> T:
        """``handling`` awaited, stopped (cancelled) once it runs past ``time_limit_s``."""
        if self.time_limit_s is None:
            return await handling
        limit = asyncio.timeout(self.time_limit_s)
        try:
            async with limit:
                return await handling
        except TimeoutError:
            if not limit.expired():
                raise  # the handler's own timeout, not the limit
            raise JobTimedOut(
                f"it took longer than {self.time_limit_s:g} s, the time limit for one job "
                "(FINCAP_JOB_TIME_LIMIT_SECONDS)"
            ) from None

    async def _keep_lease(self, job_id: str, owner: str) -> None:
        """The worker's heartbeat: the lease renewed four times per lease, so a worker that
        stops (killed, frozen) loses its job to a live one within ``lease_s``."""
        while True:
            await asyncio.sleep(self.lease_s / HEARTBEATS_PER_LEASE)
            try:
                renewed = await self.store.jobs.renew(job_id, owner, self.lease_s)
            except Exception:
                log.warning("renewing a lease failed; trying again", exc_info=True)
                continue
            if not renewed:
                return
