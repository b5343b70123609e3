"""Fair claiming: workspaces take turns, each runs at most its limit of jobs at once, and a
workspace's own jobs keep the order they were queued in (issue 25, item 8)."""

from __future__ import annotations

import asyncio

import pytest

from persistence.store import Store
from resolvers.framework.job_kinds import JobKinds
from tests import probe_jobs
from tests.clock import ManualClock
from tests.conftest import worker_pool

PROBE_KINDS = JobKinds.from_modules([probe_jobs]).freeze()


async def claimed_workspaces(store: Store, count: int, **options: int) -> list[str]:
    """The workspaces of the next ``count`` claims (each job completed at once)."""
    seen = []
    for _ in range(count):
        job = await store.jobs.claim("w1", lease_s=30, **options)
        assert job is not None
        seen.append(job["workspaceId"])
        assert await store.jobs.complete(job["_id"], "w1")
    return seen


async def test_a_backlog_does_not_starve_another_workspaces_new_job(store: Store) -> None:
    for n in range(500):
        await store.jobs.enqueue("org_a", "probe", {"n": n})
    upload = await store.jobs.enqueue("org_b", "probe", {"upload": True})
    first = await store.jobs.claim("w1", lease_s=30)
    second = await store.jobs.claim("w2", lease_s=30)
    assert first is not None and second is not None
    # B's job is taken at once, not after A's 500.
    assert upload["_id"] in {first["_id"], second["_id"]}


async def test_workspaces_with_waiting_jobs_take_turns(store: Store) -> None:
    for _ in range(4):
        await store.jobs.enqueue("org_a", "probe", {})
    for _ in range(2):
        await store.jobs.enqueue("org_b", "probe", {})
    await store.jobs.enqueue("org_c", "probe", {})
    order = await claimed_workspaces(store, 7)
    # Round robin while several wait; the one with the backlog finishes last.
    assert sorted(order[:3]) == ["org_a", "org_b", "org_c"]
    assert sorted(order[3:5]) == ["org_a", "org_b"]
    assert order[5:] == ["org_a", "org_a"]
    assert await store.jobs.claim("w1", lease_s=30) is None


async def test_a_workspace_runs_at_most_its_limit_of_jobs_at_once(store: Store) -> None:
    for _ in range(5):
        await store.jobs.enqueue("org_a", "probe", {})
    first = await store.jobs.claim("w1", lease_s=30, per_workspace=2)
    second = await store.jobs.claim("w2", lease_s=30, per_workspace=2)
    assert first is not None and second is not None
    assert await store.jobs.claim("w3", lease_s=30, per_workspace=2) is None  # A is at its limit
    other = await store.jobs.enqueue("org_b", "probe", {})
    taken = await store.jobs.claim("w3", lease_s=30, per_workspace=2)
    assert taken is not None and taken["_id"] == other["_id"]  # another workspace is not held up
    assert await store.jobs.complete(first["_id"], "w1")
    third = await store.jobs.claim("w1", lease_s=30, per_workspace=2)
    assert third is not None and third["workspaceId"] == "org_a"
    assert await store.jobs.running("org_a") == 2


async def test_a_workspaces_jobs_run_in_the_order_they_were_queued(store: Store) -> None:
    clock = ManualClock()  # the same millisecond for every job: only the queue order differs
    jobs = Store(store.db, clock).jobs
    queued = [(await jobs.enqueue("org_a", "probe", {"n": n}))["_id"] for n in range(8)]
    taken = []
    for _ in queued:
        job = await jobs.claim("w1", lease_s=30)
        assert job is not None
        taken.append(job["_id"])
    assert taken == queued


async def test_a_retried_job_does_not_hide_its_workspace(store: Store) -> None:
    """A job failed into a later retry, and periodic work queued for later, are found when
    they come due (the workspace's hint follows the earliest queued job)."""
    clock = ManualClock()
    jobs = Store(store.db, clock).jobs
    job = await jobs.enqueue("org_a", "probe", {})
    assert await jobs.claim("w1", lease_s=30) is not None
    assert await jobs.fail(job["_id"], "w1", "boom") == "queued"
    assert await jobs.claim("w1", lease_s=30) is None  # its backoff: 2 s
    due_now = await jobs.enqueue("org_a", "poll", {})
    assert (await jobs.claim("w1", lease_s=30) or {}).get("_id") == due_now["_id"]
    clock.advance(seconds=2)
    again = await jobs.claim("w1", lease_s=30)
    assert again is not None and again["_id"] == job["_id"] and again["attempts"] == 2


async def test_a_lost_hint_is_repaired_from_the_jobs(store: Store) -> None:
    """A crash between an enqueue's two writes (the job, then its workspace's hint) cannot
    strand the job: the claim finds it anyway."""
    job = await store.jobs.enqueue("org_a", "probe", {})
    await store.db["job_queues"].delete_many({})
    taken = await store.jobs.claim("w1", lease_s=30)
    assert taken is not None and taken["_id"] == job["_id"]


@pytest.mark.wire
async def test_fair_claims_hold_with_several_workers_on_the_wire(wire_store: Store) -> None:
    """Four workers claim at once over the real protocol: every job goes to exactly one, the
    newcomer's job is among the first round, and the limit holds."""
    jobs = wire_store.jobs
    for n in range(40):
        await jobs.enqueue("org_a", "probe", {"n": n})
    upload = await jobs.enqueue("org_b", "probe", {"upload": True})
    claimed = await asyncio.gather(
        *(jobs.claim(f"w{n}", lease_s=30, per_workspace=3) for n in range(4))
    )
    taken = [job for job in claimed if job is not None]
    assert upload["_id"] in {job["_id"] for job in taken}
    assert len({job["_id"] for job in taken}) == len(taken)
    assert await jobs.running("org_a") <= 3
    for job in taken:
        stored = await jobs.get(job["_id"])
        assert stored is not None and stored["leaseOwner"] == job["leaseOwner"]


async def test_a_job_whose_workers_keep_dying_is_given_up_not_run_again(store: Store) -> None:
    """Each worker that took it died (its lease expired, or was taken back at start-up): once
    that happened more often than its attempts allow, it is given up with the reason."""
    clock = ManualClock()
    clocked = Store(store.db, clock)
    probe_jobs.SEEN.clear()
    job = await clocked.jobs.enqueue("org_a", "fragile", {}, max_attempts=2)
    for ghost in ("ghost-1", "ghost-2"):
        assert await clocked.jobs.claim(ghost, lease_s=30) is not None  # then it dies
        clock.advance(seconds=31)
    pool = worker_pool(clocked, PROBE_KINDS, lease_s=30)
    assert await pool.run_until_idle() == 1
    assert probe_jobs.SEEN == [
        (
            "gave-up",
            "the worker running it stopped without finishing 2 times (it may need more memory "
            "than the worker has)",
        )
    ]
    stored = await clocked.jobs.get(job["_id"])
    assert stored is not None and stored["status"] == "dead" and stored["attempts"] == 3
