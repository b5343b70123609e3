"""Leases that follow liveness (issue 35, F5): a worker heartbeats its leases; a job whose
worker stopped is taken back within about ten seconds by any live worker, in its place in the
queue (not behind the jobs queued after it); a live worker's job is never taken from it."""

from __future__ import annotations

import asyncio
import signal
import time
from typing import Any

import pytest

from app.host.config import Settings
from app.host.workers import HEARTBEATS_PER_LEASE
from persistence.embedded import EmbeddedServer
from persistence.jobs import owner_gone
from persistence.store import Store
from resolvers.framework.job_kinds import JobKinds, JobKindSpec
from resolvers.services.processing.pipeline import TERMINAL, receive
from tests import probe_jobs
from tests.clock import ManualClock
from tests.conftest import make_tenant, spawn_worker, worker_pool
from tests.hardening.test_crash_recovery import dead_owner, services_over, till_slip

PROBE_KINDS = JobKinds.from_modules([probe_jobs]).freeze()


async def queue_three(store: Store) -> list[str]:
    return [(await store.jobs.enqueue("org_a", "probe", {"n": n}))["_id"] for n in range(3)]


def blocking_kind(started: asyncio.Event, release: asyncio.Event) -> JobKinds:
    """A ``slow`` job kind that says it started, then waits for ``release``."""

    async def slow(services: Any, job: Any) -> None:
        started.set()
        await release.wait()

    kinds = JobKinds()
    kinds.add(JobKindSpec("slow", slow))
    return kinds.freeze()


async def test_a_job_taken_back_from_a_dead_worker_keeps_its_place(store: Store) -> None:
    """Before, a job taken back was due "now": behind every job of its workspace queued after
    it (a replacement worker ran it last, 39 s later in the probe)."""
    clock = ManualClock()
    clocked = Store(store.db, clock)
    first, second, _ = await queue_three(clocked)
    owner = dead_owner()
    taken = await clocked.jobs.claim(owner, lease_s=10)
    assert taken is not None and taken["_id"] == first
    clock.advance(2)  # the worker died two seconds into the job
    assert owner_gone(owner)
    assert await clocked.jobs.take_back_leases(owner_gone) == 1
    again = await clocked.jobs.claim("live/1/1/0", lease_s=10)
    assert again is not None and again["_id"] == first  # not the second job: its place kept
    assert again["attempts"] == 2
    following = await clocked.jobs.claim("live/1/1/1", lease_s=10)
    assert following is not None and following["_id"] == second


async def test_a_lease_not_renewed_is_taken_over_first_once_it_runs_out(store: Store) -> None:
    """A worker on another host stops (its process cannot be looked at from here): its job is
    taken over once the lease runs out, ten seconds by default, before any queued job."""
    assert Settings().job_lease_s == 10
    clock = ManualClock()
    clocked = Store(store.db, clock)
    first, second, _ = await queue_three(clocked)
    elsewhere = "another-host/4242/1/0"
    assert await clocked.jobs.claim(elsewhere, lease_s=Settings().job_lease_s) is not None
    clock.advance(9.5)
    pool = worker_pool(clocked, PROBE_KINDS)
    assert pool.lease_s == Settings().job_lease_s
    held = await clocked.jobs.claim("live/1/1/0", lease_s=10)
    assert held is not None and held["_id"] == second  # the lease still stands
    clock.advance(1)
    taken = await clocked.jobs.claim("live/1/1/1", lease_s=10)
    assert taken is not None and taken["_id"] == first and taken["leaseOwner"] == "live/1/1/1"


async def test_a_working_worker_heartbeats_and_keeps_its_job(store: Store) -> None:
    """While a job runs, its lease is renewed (HEARTBEATS_PER_LEASE times per lease): it never
    runs out under a live worker, and no other worker can take the job."""
    release, started = asyncio.Event(), asyncio.Event()
    job = await store.jobs.enqueue("org_a", "slow", {})
    pool = worker_pool(store, blocking_kind(started, release), count=1, lease_s=1.2)
    pool.start()
    try:
        await asyncio.wait_for(started.wait(), timeout=60)
        renewals: list[Any] = []
        while len(renewals) < HEARTBEATS_PER_LEASE * 2:  # two leases' worth of time
            stored = await store.jobs.get(job["_id"])
            assert stored is not None and stored["status"] == "running"
            if not renewals or stored["leaseUntil"] != renewals[-1]:
                renewals.append(stored["leaseUntil"])
            # The lease has been renewed since any other worker could last see it run out.
            assert await store.jobs.claim("another/1/1/0", lease_s=1.2) is None
            await asyncio.sleep(0.05)  # polling the stored lease, not waiting for time
        assert renewals == sorted(renewals)
    finally:
        release.set()
        await pool.stop()
    done = await store.jobs.get(job["_id"])
    assert done is not None and done["status"] == "done" and done["attempts"] == 1


@pytest.mark.wire
async def test_a_killed_workers_job_is_taken_back_by_the_idle_one_within_seconds(
    embedded_server: EmbeddedServer, wire_store: Store
) -> None:
    """Two `fincap worker` processes with the default lease; one is killed (SIGKILL) mid-job
    while the other sits idle: the idle one takes the job back (its process is gone from this
    host, seen by the sweep every few seconds; the lease would run out after ten) and finishes
    it. Before, it waited out the whole 60 s lease. The time from the kill to the take-over is
    printed: the settle time of a killed job."""
    tenant = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    services = services_over(wire_store)
    workers = [spawn_worker(embedded_server, wire_store, lease_s=None) for _ in range(2)]
    try:
        # One photographed receipt at a time, until one worker is seen mid-job.
        document_id, _ = await receive(
            services,
            tenant.org_id,
            data=till_slip(1),
            file_name="slip.png",
            mime_type="image/png",
            source="upload",
            details={},
        )
        deadline = time.monotonic() + 120
        job: dict[str, Any] | None = None
        while job is None:
            assert time.monotonic() < deadline, "no worker took the job"
            job = await wire_store.db["jobs"].find_one({"status": "running"})
            await asyncio.sleep(0.01)  # polling for the state
        [victim] = [w for w in workers if str(w.pid) == job["leaseOwner"].split("/")[1]]
        [survivor] = [w for w in workers if w is not victim]
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        killed_at = time.monotonic()
        while True:
            stored = await wire_store.db["jobs"].find_one({"_id": job["_id"]})
            assert stored is not None
            owner = str(stored.get("leaseOwner") or "")
            if stored["status"] == "done" or owner.split("/")[1:2] == [str(survivor.pid)]:
                break
            # The old 60 s lease is the failure; the hang guard sits well below it.
            assert time.monotonic() - killed_at < 30, f"not taken back: {stored}"
            await asyncio.sleep(0.05)
        settle = time.monotonic() - killed_at
        print(f"killed worker's job taken back after {settle:.1f} s")
        # The job is completed just after the document's outcome: wait for both.
        while stored["status"] != "done":
            assert time.monotonic() - killed_at < 120, f"not finished: {stored}"
            await asyncio.sleep(0.05)
            stored = await wire_store.db["jobs"].find_one({"_id": job["_id"]})
            assert stored is not None
    finally:
        for worker in workers:
            worker.kill()
            worker.wait(timeout=30)
    assert stored["attempts"] == 2 and stored["leaseOwner"] is None
    document = await wire_store.documents.reads.get(tenant.org_id, document_id)
    assert document is not None and document["processingStatus"] in TERMINAL
