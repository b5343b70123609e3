"""Acknowledged means durable (issue 25, item 12): intake writes are journaled (those inside the
intake's transaction by its commit), a store killed part-way through an intake loses nothing
that was committed and shows nothing half-written, and a process starting up takes back the
leases of workers that died and gives every unfinished document a job. Wire tests: SecantusDB
on disk, killed with SIGKILL and started again on the same files."""

from __future__ import annotations

import asyncio
import io
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from pymongo import monitoring

from app.host.config import Settings
from app.host.processing import running_workers
from domain.documents import SAVED, TERMINAL
from engines.keyring import Keyring
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.ids import utcnow
from persistence.jobs import JobRecord
from persistence.lease_owners import LeaseOwner
from persistence.store import Store
from resolvers.framework.services import Services
from resolvers.services.processing.intake import IntakeDuplicate
from resolvers.services.processing.pipeline import (
    PROCESS_DOCUMENT,
    Original,
    receive,
    receive_item,
)
from resolvers.services.processing.recovery import recover_at_start_up
from tests.conftest import make_tenant, spawn_worker, worker_pool
from tests.extraction.make_fixtures import RECEIPT_LINES, receipt_image
from tests.live import Process
from tests.sources.conftest import fixture

pytestmark = pytest.mark.wire
INTAKE_COLLECTIONS = {"originals.files", "originals.chunks", "documents", "activity", "jobs"}


class WriteConcerns(monitoring.CommandListener):
    """The write concern of every insert and update, by collection; a write inside a
    transaction has the one its transaction is committed with."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, Any]]] = []
        self._in_transaction: dict[Any, list[int]] = {}

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        command = event.command
        session = repr(command.get("lsid")), command.get("txnNumber")
        if event.command_name in ("insert", "update"):
            collection = str(command[event.command_name])
            self.seen.append(
                (event.command_name, collection, dict(command.get("writeConcern") or {}))
            )
            if command.get("autocommit") is False:
                self._in_transaction.setdefault(session, []).append(len(self.seen) - 1)
        if event.command_name == "commitTransaction":
            concern = dict(command.get("writeConcern") or {})
            for index in self._in_transaction.pop(session, []):
                verb, collection, _ = self.seen[index]
                self.seen[index] = (verb, collection, concern)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


def dead_owner() -> str:
    """The lease owner name of a process of this host that has ended."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return LeaseOwner(socket.gethostname(), process.pid, 1).worker(0)


def services_over(store: Store) -> Services:
    return worker_pool(store).services


async def receive_pdf(services: Services, workspace_id: str, message_id: str) -> list[str]:
    _, document_ids = await receive_item(
        services,
        workspace_id,
        source="inbound-email",
        originals=[Original(fixture("text-layer.pdf"), "northwind.pdf", "application/pdf")],
        details={"from": "carol@example.org"},
        message_id=message_id,
    )
    return document_ids


async def test_every_intake_write_is_journaled(embedded_server: EmbeddedServer) -> None:
    listener = WriteConcerns()
    name = f"wire_{uuid.uuid4().hex[:10]}"
    client, db = connect(embedded_server.uri, name, event_listeners=[listener])
    try:
        store = Store(db)
        await store.ensure_indexes()
        tenant = await make_tenant(store, "alice@example.com", "Alice Co")
        listener.seen.clear()
        await receive_pdf(services_over(store), tenant.org_id, "<journal-1@example.org>")
        inserts = {collection: concern for verb, collection, concern in listener.seen}
        assert set(inserts) >= INTAKE_COLLECTIONS, inserts
        for collection in INTAKE_COLLECTIONS:
            writes = [c for _, name_, c in listener.seen if name_ == collection]
            assert writes and all(concern.get("j") is True for concern in writes), (
                collection,
                writes,
            )
    finally:
        await client.drop_database(name)
        client.close()


@pytest.fixture
def disk_server(tmp_path: Path) -> Iterator[EmbeddedServer]:
    """SecantusDB on files of its own (durable, as `fincap serve` runs it)."""
    server = EmbeddedServer(storage=str(tmp_path / "db"), log_path=tmp_path / "db.log").start()
    yield server
    server.stop()


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def kill_9(server: EmbeddedServer) -> None:
    """SIGKILL the store (its supervisor dies, the server itself gets SIGKILL with it)."""
    assert server.process is not None
    server.process.send_signal(signal.SIGKILL)
    server.process.wait(timeout=30)
    deadline = time.monotonic() + 30
    while listening(server.port):
        if time.monotonic() > deadline:
            pytest.fail("the killed store still answers")
        time.sleep(0.05)


class ProcessKilled(BaseException):
    """The fincap process dies here too: no clean-up of what it wrote runs (``except
    Exception`` blocks do not see it)."""


async def test_store_killed_inside_the_intakes_unit_loses_nothing_committed(
    disk_server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store dies (SIGKILL) while the intake writes its unit (the item and the document
    written inside the transaction, the job next): the transaction never committed, so after a
    restart on the same files nothing of it is readable; the intake's journal says it was
    committed, so the start-up check writes it out whole and the document is processed; the
    sender's retry is answered with the item it made, never taken twice."""
    # This process "dies" by an exception: its session's end would wait for the dead store.
    # The intake is written under the name of a process that has ended, as the restarted
    # service finds it (a live writer's committed intake is its writer's to finish).
    monkeypatch.setattr("resolvers.services.processing.intake._owner", dead_owner)
    client, db = connect(disk_server.uri, "fincap", serverSelectionTimeoutMS=1000)
    store = Store(db)
    await store.ensure_indexes()
    tenant = await make_tenant(store, "alice@example.com", "Alice Co")
    services = services_over(store)

    async def die_first(*args: Any, **kwargs: Any) -> Any:
        kill_9(disk_server)  # the store is gone, and so is this process, mid-intake
        raise ProcessKilled

    store.jobs.enqueue = die_first  # type: ignore[method-assign]
    with pytest.raises(ProcessKilled):
        await receive_pdf(services, tenant.org_id, "<killed-1@example.org>")
    client.close()

    # Restarted on the same files.
    restarted = EmbeddedServer(storage=disk_server.storage).start()
    try:
        client, db = connect(restarted.uri, "fincap")
        store = Store(db)
        await store.ensure_indexes()
        for collection in ("documents", "activity", "jobs"):
            assert await db[collection].count_documents({}) == 0, collection  # none of it
        [journal] = await db["intakes"].find({}).to_list(None)
        assert journal["state"] == "committed"
        services = services_over(store)
        recovered = await recover_at_start_up(services)
        assert recovered.intakes_written == 1
        [document_id] = journal["documentIds"]
        assert await worker_pool(store).run_until_idle() == 1
        document = await store.documents.reads.get(tenant.org_id, document_id)
        assert document is not None and document["processingStatus"] == "processed"
        assert document["merchant"] == "Northwind Consulting GmbH"
        # The sender's retry: the item it made.
        again = await receive_item_of(services, tenant.org_id, "<killed-1@example.org>")
        assert again == journal["activityId"]
        assert await db["activity"].count_documents({}) == 1
        # Asked again (a restart of another process): nothing more to do.
        recovered = await recover_at_start_up(services)
        assert recovered.intakes_written == recovered.documents_requeued == 0
        client.close()
    finally:
        restarted.stop()


async def receive_item_of(services: Services, workspace_id: str, message_id: str) -> str:
    """The item a retry of ``message_id`` is answered with."""
    try:
        await receive_pdf(services, workspace_id, message_id)
    except IntakeDuplicate as duplicate:
        return str(duplicate.item["_id"])
    raise AssertionError("the retry was taken again")


async def test_a_killed_workers_lease_is_taken_back_at_start_up(
    embedded_server: EmbeddedServer, wire_store: Store
) -> None:
    """A `fincap worker` killed with SIGKILL mid-job: the next process to start on the host
    takes its lease back at once (no waiting out the 60 s lease) and finishes the document."""
    tenant = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    services = services_over(wire_store)
    [document_id] = await receive_pdf(services, tenant.org_id, "<lease-1@example.org>")
    worker = spawn_worker(embedded_server, wire_store, lease_s=60)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            leased = await wire_store.db["jobs"].find_one({"status": "running"})
            if leased is not None:
                break
            await asyncio.sleep(0.01)  # polling for the state, not waiting for time to pass
        else:
            pytest.fail("the worker never took the job")
        worker.send_signal(signal.SIGKILL)
    finally:
        worker.kill()
        worker.wait(timeout=30)
    job = await wire_store.db["jobs"].find_one({})
    assert job is not None and job["status"] == "running", job
    assert job["leaseOwner"].split("/")[1] == str(worker.pid)  # the dead process is named
    assert await worker_pool(wire_store).run_until_idle() == 0  # its lease still holds

    settings = Settings(extraction_executor="thread", workers=0)
    async with running_workers(wire_store, settings, count=0, keyring=Keyring.generate()) as pool:
        # Starting up took the lease back: due now, nothing left to wait for.
        job = await wire_store.db["jobs"].find_one({})
        assert job is not None and job["status"] == "queued" and job["leaseOwner"] is None
        assert await pool.run_until_idle() == 1
    document = await wire_store.documents.reads.get(tenant.org_id, document_id)
    assert document is not None and document["processingStatus"] == "processed"


async def test_a_live_workers_lease_is_left_alone(wire_store: Store) -> None:
    """Only leases of processes that are gone are taken back: this process's own is not."""
    tenant = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    services = services_over(wire_store)
    await receive_pdf(services, tenant.org_id, "<lease-2@example.org>")
    pool = worker_pool(wire_store)
    owner = pool.process.worker(0)
    assert await wire_store.jobs.claim(owner, lease_s=60) is not None
    assert (await recover_at_start_up(services)).leases_taken_back == 0
    job = await wire_store.db["jobs"].find_one({})
    assert job is not None and job["status"] == "running" and job["leaseOwner"] == owner


def till_slip(n: int) -> bytes:
    """A photographed receipt of its own (merchant and total differ: no duplicates), which
    costs its worker OCR: long enough a job to be caught in the middle of."""
    lines = (f"SHOP NUMBER {n} LTD", *RECEIPT_LINES[1:7], f"TOTAL GBP {10 + n}.50")
    buffer = io.BytesIO()
    receipt_image(lines).save(buffer, format="PNG")
    return buffer.getvalue()


async def job_mid_pipeline(
    store: Store, workers: list[Process], feed: Callable[[], Awaitable[None]]
) -> JobRecord:
    """A job seen mid-pipeline (running, its document being processed) in the hands of one of
    ``workers``, once every one of them has been seen holding a job: all have started, so the
    job can only come back through its lease expiring, not through a start-up's take-back.
    ``feed`` uploads another document whenever the queue runs dry before then."""
    pids = {str(worker.pid) for worker in workers}
    seen: set[str] = set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        async for job in store.db["jobs"].find({"status": "running"}):
            owner_pid = str(job["leaseOwner"]).split("/")[1]
            seen.add(owner_pid)
            document = await store.db["documents"].find_one({"_id": job["payload"]["documentId"]})
            processing = (document or {}).get("processingStatus") == "processing"
            if seen >= pids and owner_pid in pids and processing:
                return cast(JobRecord, job)
        if not await store.db["jobs"].count_documents(
            {"status": "queued", "kind": PROCESS_DOCUMENT}
        ):
            await feed()
        await asyncio.sleep(0.01)  # polling for the state, not waiting for time to pass
    pytest.fail(f"the workers were not seen mid-job (seen holding jobs: {sorted(seen)})")


async def test_a_worker_killed_mid_job_loses_and_doubles_nothing(
    embedded_server: EmbeddedServer, wire_store: Store
) -> None:
    """Two `fincap worker` processes share photographed receipts uploaded over the wire; once
    both have held a job, one is killed with SIGKILL mid-job. The other takes the job back (the
    dead process seen by its sweep, or its lease run out), and every document ends processed
    exactly once: one billed count each, the killed job claimed twice (the dead worker's
    attempt and the one that finished it), every other job once, no job added."""
    tenant = await make_tenant(wire_store, "alice@example.com", "Alice Co")
    services = services_over(wire_store)
    document_ids: list[str] = []

    async def upload_one() -> None:
        if len(document_ids) >= 30:
            pytest.fail("30 uploads and the two workers were never both seen at work")
        document_id, _ = await receive(
            services,
            tenant.org_id,
            data=till_slip(len(document_ids)),
            file_name=f"slip-{len(document_ids)}.png",
            mime_type="image/png",
            source="upload",
            details={},
        )
        document_ids.append(document_id)

    for _ in range(6):
        await upload_one()
    workers = [spawn_worker(embedded_server, wire_store, lease_s=10) for _ in range(2)]
    try:
        job = await job_mid_pipeline(wire_store, workers, upload_one)
        [victim] = [w for w in workers if str(w.pid) == job["leaseOwner"].split("/")[1]]
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        held = await wire_store.jobs.get(job["_id"])
        # Killed mid-job: its job is still leased to the dead process.
        assert held is not None and held["status"] == "running", held
        assert held["leaseOwner"] == job["leaseOwner"]
        killed_document = await wire_store.db["documents"].find_one(
            {"_id": job["payload"]["documentId"]}
        )
        assert killed_document is not None
        # The signal may land after the document's outcome was written, before its job was
        # completed (the pipeline's last writes: outcome, activity, usage count).
        finished_before_death = killed_document["processingStatus"] in TERMINAL
        deadline = time.monotonic() + 60
        unfinished = {"processingStatus": {"$nin": sorted(TERMINAL)}}
        running = {"status": {"$ne": "done"}}
        while await wire_store.db["documents"].count_documents(unfinished) or (
            await wire_store.db["jobs"].count_documents(running)
        ):
            if time.monotonic() > deadline:
                left = await wire_store.db["documents"].find(unfinished).to_list(None)
                pytest.fail(f"documents never finished: {[d['_id'] for d in left]}")
            await asyncio.sleep(0.05)
    finally:
        for worker in workers:
            worker.kill()
            worker.wait(timeout=30)

    documents = await wire_store.db["documents"].find({}).to_list(None)
    assert sorted(d["_id"] for d in documents) == sorted(document_ids)
    assert {d["processingStatus"] for d in documents} <= set(SAVED), documents
    today = utcnow().date()
    billed = await wire_store.documents.totals.billed(
        tenant.org_id, today, today + timedelta(days=1)
    )
    # Each one billed once, however the kill fell: the count is written with the outcome
    # (before, it was a write of its own after it, lost when the worker died in between).
    assert billed == len(document_ids), finished_before_death
    jobs = await wire_store.db["jobs"].find({"kind": PROCESS_DOCUMENT}).to_list(None)
    assert sorted(j["payload"]["documentId"] for j in jobs) == sorted(document_ids)
    attempts = {j["_id"]: j["attempts"] for j in jobs}
    assert attempts == {j["_id"]: 2 if j["_id"] == job["_id"] else 1 for j in jobs}
    assert {j["status"] for j in jobs} == {"done"}
