"""Job kinds are declared next to their code and collected explicitly; dedupe keys keep
periodic work from piling up; a kind's give-up hook runs after the last attempt."""

from __future__ import annotations

import pytest

from persistence.store import Store
from resolvers import build_job_kinds
from resolvers.framework.job_kinds import JobKindError, JobKinds, JobKindSpec
from resolvers.services.processing.pipeline import PROCESS_DOCUMENT, run_process_document
from tests import probe_jobs
from tests.clock import ManualClock
from tests.conftest import worker_pool

PROBE_KINDS = JobKinds.from_modules([probe_jobs]).freeze()


def test_the_service_kinds_are_collected_from_the_job_modules() -> None:
    kinds = build_job_kinds()
    spec = kinds.get(PROCESS_DOCUMENT)
    assert spec is not None and spec.handler is run_process_document
    assert spec.on_give_up is not None
    # Jobs queued under the kind's earlier name still run.
    assert kinds.get("process-upload") is spec
    assert [k.name for k in kinds] == [
        "billing-close-periods",
        "deliver-export",
        "fetch-whatsapp-media",
        "make-thumbnail",
        "notify-source",
        "poll-mailbox",
        PROCESS_DOCUMENT,
        "reprocess-document",
        "run-match-rules",
        "run-scheduled-rule",
        "run-update-rules",
    ]


def test_duplicate_names_and_late_additions_fail() -> None:
    kinds = JobKinds.from_modules([probe_jobs])
    with pytest.raises(JobKindError, match="duplicate job kind 'probe'"):
        kinds.add(JobKindSpec(name="probe", handler=probe_jobs.probe))
    kinds.freeze()
    with pytest.raises(JobKindError, match="frozen"):
        kinds.add(JobKindSpec(name="later", handler=probe_jobs.probe))


async def test_a_dedupe_key_allows_one_queued_or_running_job(store: Store) -> None:
    first = await store.jobs.enqueue("org_a", "poll", {}, dedupe_key="poll:org_a")
    again = await store.jobs.enqueue("org_a", "poll", {}, dedupe_key="poll:org_a")
    assert again["_id"] == first["_id"]  # queued: the same job
    claimed = await store.jobs.claim("w1", lease_s=30)
    assert claimed is not None and claimed["_id"] == first["_id"]
    running = await store.jobs.enqueue("org_a", "poll", {}, dedupe_key="poll:org_a")
    assert running["_id"] == first["_id"]  # running: still the same job
    other = await store.jobs.enqueue("org_b", "poll", {}, dedupe_key="poll:org_b")
    assert other["_id"] != first["_id"]
    assert await store.jobs.pending_count() == 2
    # Jobs without a key never collide.
    plain = [await store.jobs.enqueue("org_a", "probe", {}) for _ in range(3)]
    assert len({job["_id"] for job in plain}) == 3


async def test_a_finished_or_dead_job_releases_its_key(store: Store) -> None:
    job = await store.jobs.enqueue("org_a", "probe", {}, dedupe_key="k", max_attempts=1)
    assert await store.jobs.claim("w1", lease_s=30) is not None
    assert await store.jobs.complete(job["_id"], "w1")
    second = await store.jobs.enqueue("org_a", "probe", {}, dedupe_key="k", max_attempts=1)
    assert second["_id"] != job["_id"]
    assert await store.jobs.claim("w1", lease_s=30) is not None
    assert await store.jobs.fail(second["_id"], "w1", "boom") == "dead"
    third = await store.jobs.enqueue("org_a", "probe", {}, dedupe_key="k")
    assert third["_id"] not in (job["_id"], second["_id"])


async def test_periodic_work_runs_again_as_the_same_job(store: Store) -> None:
    clock = ManualClock()
    clocked = Store(store.db, clock)
    probe_jobs.SEEN.clear()
    pool = worker_pool(clocked, PROBE_KINDS, lease_s=30)
    job = await clocked.jobs.enqueue("org_a", "poll", {}, dedupe_key="poll:org_a")
    assert await pool.run_until_idle() == 1
    queued = await clocked.jobs.get(job["_id"])
    assert queued is not None and queued["status"] == "queued" and queued["attempts"] == 0
    assert queued["runAfter"] == job["runAfter"] + probe_jobs.POLL_EVERY
    # Asking for it again meanwhile (a restart, a "poll now") does not add a second poller.
    again = await clocked.jobs.enqueue("org_a", "poll", {}, dedupe_key="poll:org_a")
    assert again["_id"] == job["_id"]
    assert await pool.run_until_idle() == 0  # not due yet
    clock.advance(seconds=probe_jobs.POLL_EVERY.total_seconds())
    assert await pool.run_until_idle() == 1
    assert [("poll", job["_id"]), ("poll", job["_id"])] == probe_jobs.SEEN
    assert await clocked.jobs.pending_count() == 1


async def test_the_give_up_hook_runs_once_after_the_last_attempt(store: Store) -> None:
    clock = ManualClock()
    clocked = Store(store.db, clock)
    probe_jobs.SEEN.clear()
    outcomes: list[tuple[str, str]] = []
    pool = worker_pool(
        clocked,
        PROBE_KINDS,
        lease_s=30,
        on_job=lambda kind, outcome: outcomes.append((kind, outcome)),
    )
    await clocked.jobs.enqueue("org_a", "always-fails", {}, max_attempts=2)
    assert await pool.run_until_idle() == 1
    assert probe_jobs.SEEN == []  # a retry is still to come
    clock.advance(seconds=2)  # the first backoff
    assert await pool.run_until_idle() == 1
    assert probe_jobs.SEEN == [("gave-up", "no luck")]
    assert outcomes == [("always-fails", "retry"), ("always-fails", "dead")]
