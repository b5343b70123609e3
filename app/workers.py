"""Job workers: inside ``fincap serve`` (a few asyncio tasks) or as ``fincap worker`` processes.

Each worker loops: claim a job (an atomic lease in MongoDB), run its handler while renewing the
lease, then complete it, or fail it so it is retried with backoff. A worker that dies leaves its
lease to expire; another worker then takes the job over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from app.observability import request_id_scope
from engines.currency import RateBook
from persistence.store import Store
from resolvers.files import PROCESS_UPLOAD
from resolvers.processing import Analyzer, give_up, process_upload

log = logging.getLogger("fincap.workers")
Handler = Callable[[Mapping[str, Any]], Awaitable[None]]


class WorkerPool:
    """``count`` workers over the jobs collection of ``store``."""

    def __init__(
        self,
        store: Store,
        analyzer: Analyzer,
        rates: RateBook,
        *,
        count: int = 1,
        lease_s: float = 60.0,
        poll_s: float = 1.0,
        on_job: Callable[[str, str], None] | None = None,
    ) -> None:
        self.store = store
        self.analyzer = analyzer
        self.count = count
        self.lease_s = lease_s
        self._on_job = on_job or (lambda kind, outcome: None)
        self.poll_s = poll_s
        self.owner_prefix = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self._handlers: dict[str, Handler] = {
            PROCESS_UPLOAD: lambda job: process_upload(store, analyzer, rates, job),
        }
        # What to record when a job of this kind has used up its attempts.
        self._on_dead: dict[str, Callable[[Mapping[str, Any], str], Awaitable[None]]] = {
            PROCESS_UPLOAD: lambda job, error: give_up(store, job, error),
        }
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False

    def wake(self) -> None:
        """A job was queued: stop waiting for the next poll."""
        self._wake.set()

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._loop(f"{self.owner_prefix}:{i}")) for i in range(self.count)
        ]

    async def stop(self) -> None:
        """Finish the jobs in hand, then stop; an interrupted job is retried elsewhere."""
        self._stopping = True
        self._wake.set()
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
            except Exception:
                log.exception("worker loop error")
                worked = False
            if not worked and not self._stopping:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), timeout=self.poll_s)

    async def run_one(self, owner: str) -> bool:
        """Claim and run one job; False when none is due."""
        job = await self.store.jobs.claim(owner, self.lease_s)
        if job is None:
            return False
        with request_id_scope(job.get("payload", {}).get("requestId") or job["_id"]):
            await self._run_job(job, owner)
        return True

    async def _run_job(self, job: dict[str, Any], owner: str) -> None:
        """Run the job's handler while renewing its lease; complete it, or fail it for a retry."""
        handler = self._handlers.get(job["kind"])
        renewer = asyncio.create_task(self._keep_lease(job["_id"], owner))
        try:
            if handler is None:
                raise RuntimeError(f"no handler for job kind {job['kind']!r}")
            await handler(job)
        except Exception as exc:
            log.warning(
                "job failed",
                extra={"jobId": job["_id"], "attempt": job["attempts"], "error": repr(exc)},
            )
            status = await self.store.jobs.fail(job["_id"], owner, repr(exc))
            on_dead = self._on_dead.get(job["kind"])
            if status == "dead" and on_dead is not None:
                # The reason people read (processingReason): the message, not the repr.
                await on_dead(job, str(exc) or type(exc).__name__)
            self._on_job(job["kind"], "dead" if status == "dead" else "retry")
        else:
            await self.store.jobs.complete(job["_id"], owner)
            self._on_job(job["kind"], "done")
        finally:
            renewer.cancel()

    async def _keep_lease(self, job_id: str, owner: str) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            if not await self.store.jobs.renew(job_id, owner, self.lease_s):
                return
