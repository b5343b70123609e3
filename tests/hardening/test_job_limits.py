"""Background jobs bounded per tenant (issue 35, M6): one workspace's backlog never takes a
pool's last free worker, so another workspace's upload starts at once; a job over its time limit
is stopped with the reason (its analysis process with it) and never holds a worker."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psutil
import pytest

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from engines.analysis import Analysis, analyze
from engines.currency import default_rate_book
from persistence.store import Store
from resolvers import build_job_kinds
from resolvers.framework.job_kinds import JobKinds, JobKindSpec
from resolvers.services.processing.analyzer import Analyzer
from resolvers.services.processing.pipeline import TERMINAL, receive
from tests.conftest import make_tenant, worker_pool
from tests.hardening.test_analysis import FIXTURES, analysis_children, existing, process_pool
from tests.hardening.test_crash_recovery import services_over


def held_kinds(started: dict[str, asyncio.Event], release: asyncio.Event) -> JobKinds:
    """``held``: says it started (by the job's ``name``), then waits for ``release``."""

    async def held(services: Any, job: Any) -> None:
        started.setdefault(job["payload"]["name"], asyncio.Event()).set()
        await release.wait()

    async def stuck(services: Any, job: Any) -> None:
        await asyncio.Event().wait()  # never ends by itself

    async def quick(services: Any, job: Any) -> None:
        started.setdefault(job["payload"]["name"], asyncio.Event()).set()

    kinds = JobKinds()
    kinds.add(JobKindSpec("held", held))
    kinds.add(JobKindSpec("stuck", stuck))
    kinds.add(JobKindSpec("quick", quick))
    return kinds.freeze()


async def started_soon(started: dict[str, asyncio.Event], name: str) -> None:
    """Wait for job ``name`` to start (a hang guard far above any wait a claim needs)."""
    event = started.setdefault(name, asyncio.Event())
    await asyncio.wait_for(event.wait(), timeout=30)


async def test_a_backlog_leaves_the_last_free_worker_to_another_workspace(store: Store) -> None:
    """Two workers (the default), workspace A with three long jobs: one worker takes A's
    first, the other stays free for whoever else comes (before, it took A's second, and B's
    upload waited for one of A's jobs to end: +13.1 s in the probe). B's job starts while both
    of A's taken jobs still hold."""
    assert Settings().workers == 2
    started: dict[str, asyncio.Event] = {}
    release = asyncio.Event()
    for n in range(3):
        await store.jobs.enqueue("org_a", "held", {"name": f"a{n}"})
    pool = worker_pool(store, held_kinds(started, release), count=2, lease_s=30)
    pool.start()
    try:
        await started_soon(started, "a0")
        await store.jobs.enqueue("org_b", "held", {"name": "b0"})
        pool.wake()
        await started_soon(started, "b0")  # before: a hang here, both workers on A's jobs
        assert not release.is_set() and "a1" not in started
        assert await store.jobs.running("org_a") == 1
    finally:
        release.set()
        await pool.stop()


async def test_more_workers_serve_one_workspace_with_all_but_one(store: Store) -> None:
    """Four workers: a lone workspace's backlog runs on three at once, the fourth waits for
    another workspace."""
    started: dict[str, asyncio.Event] = {}
    release = asyncio.Event()
    for n in range(6):
        await store.jobs.enqueue("org_a", "held", {"name": f"a{n}"})
    pool = worker_pool(store, held_kinds(started, release), count=4, lease_s=30)
    pool.start()
    try:
        for n in range(3):
            await started_soon(started, f"a{n}")
        await store.jobs.enqueue("org_b", "held", {"name": "b0"})
        pool.wake()
        await started_soon(started, "b0")
        assert await store.jobs.running("org_a") == 3
    finally:
        release.set()
        await pool.stop()


async def test_a_job_over_its_time_limit_fails_with_the_reason_and_frees_its_worker(
    store: Store,
) -> None:
    started: dict[str, asyncio.Event] = {}
    stuck = await store.jobs.enqueue("org_a", "stuck", {})
    after = await store.jobs.enqueue("org_a", "quick", {"name": "after"})
    pool = worker_pool(store, held_kinds(started, asyncio.Event()), count=1, time_limit_s=0.5)
    assert await asyncio.wait_for(pool.run_until_idle(), timeout=60) == 2
    failed = await store.jobs.get(stuck["_id"])
    assert failed is not None and failed["status"] == "queued"  # retried, with backoff
    assert "longer than 0.5 s, the time limit for one job" in (failed["lastError"] or "")
    assert "FINCAP_JOB_TIME_LIMIT_SECONDS" in (failed["lastError"] or "")
    done = await store.jobs.get(after["_id"])
    assert done is not None and done["status"] == "done" and "after" in started


def reads_slowly(data: bytes, mime: str, **hints: Any) -> Analysis:
    """A file whose reading takes far longer than any limit (runs in the analysis process)."""
    if data == b"slow":
        time.sleep(600)
    return analyze(FIXTURES.joinpath("text-layer.pdf").read_bytes(), "application/pdf")


@pytest.fixture
def analyzer_over_processes() -> Iterator[Callable[..., Analyzer]]:
    made: list[Analyzer] = []

    def make(**kwargs: Any) -> Analyzer:
        analyzer = Analyzer(new_executor=process_pool, **kwargs)
        made.append(analyzer)
        return analyzer

    yield make
    for analyzer in made:
        analyzer.shutdown()


async def test_an_analysis_stopped_by_the_time_limit_stops_its_process(
    analyzer_over_processes: Callable[..., Analyzer],
) -> None:
    """A cancelled analysis (its job over the limit) does not go on burning a core in the
    analysis process: that process is stopped, and the next file is read in a new one."""
    before = existing()
    analyzer = analyzer_over_processes(function=reads_slowly)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(analyzer(b"slow", "application/pdf"), timeout=2)
    [busy] = analysis_children(before) or [None]
    deadline = time.monotonic() + 30
    while busy is not None and busy.is_running() and busy.status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the analysis process still runs the slow file"
        await asyncio.sleep(0.05)  # polling for the process's end
    analysis = await analyzer(b"fine", "application/pdf")
    assert analysis.fields.merchant == "Northwind Consulting GmbH"


@pytest.mark.wire
async def test_a_document_over_the_time_limit_fails_at_once_saying_so(wire_store: Store) -> None:
    """Like a file over a budget, a document whose processing runs past the limit is failed at
    once with the reason (not retried: it would take as long again), its item too."""
    tenant = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    document_id, activity_id = await receive(
        services_over(wire_store),
        tenant.org_id,
        data=b"%PDF-1.4 slow",
        file_name="slow.pdf",
        mime_type="application/pdf",
        source="upload",
        details={},
    )

    gate = threading.Event()

    def reads_until_told(data: bytes, mime: str, **hints: Any) -> Analysis:
        gate.wait(120)  # in a thread of this process: let go when the test ends
        raise AssertionError("the time limit did not stop the job")

    services = build_services(
        Settings(),
        wire_store,
        rates=default_rate_book(),
        analyzer=Analyzer(function=reads_until_told),
    )
    pool = WorkerPool(services, build_job_kinds(), count=1, time_limit_s=1)
    try:
        assert await asyncio.wait_for(pool.run_until_idle(), timeout=60) == 1
    finally:
        gate.set()
    document = await wire_store.documents.reads.get(tenant.org_id, document_id)
    assert document is not None and document["processingStatus"] == "failed"
    assert document["processingStatus"] in TERMINAL
    assert "took longer than 1 s, the time limit for one job" in document["processingReason"]
    item = await wire_store.activity.get(tenant.org_id, activity_id)
    assert item is not None and item["status"] == "failed"
    job = await wire_store.db["jobs"].find_one({"payload.documentId": document_id})
    assert job is not None and job["status"] == "dead" and job["attempts"] == 1
