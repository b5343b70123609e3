"""Atomic intake (issue 35, F1): a process killed with SIGKILL between any two of an intake's
writes leaves the intake whole or absent — for SMTP, the mail relay, files.upload, WhatsApp
messages and WhatsApp media — and the sender's retry is taken once, never as a duplicate of
something half-made.

``tests/hardening/intake_kill.py`` (one process for the module, which imports the service once)
runs each door in a child process that is killed just before its n-th write command, for every
n until an intake finishes (one fresh workspace per kill).
After the kills, before anything repairs the store, every workspace is checked through the API:
each activity item and each document belongs to a whole unit (the item names its documents,
each document is listed, readable, counted, announced by its ``document.created`` event and has
its job) or nothing is there at all. Then a process starts (the start-up check), the sender
sends the same input again, the workers finish everything, and each workspace holds one
intake, every document finished, no ``duplicateOf`` pointing at anything half-made or removed,
no original without its document. Wire tests: SecantusDB over TCP.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from bson import ObjectId

from app.host.workers import WorkerPool
from domain.documents import TERMINAL
from engines.analysis import Analysis, analyze
from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.processing.analyzer import Analyzer
from resolvers.services.processing.recovery import recover_at_start_up
from tests.conftest import Tenant, make_tenant
from tests.hardening.intake_kill import RESULT_PREFIX, Doors
from tests.sources.conftest import (
    ACCESS_TOKEN,
    APP_SECRET,
    INBOUND_SECRET,
    SourceApp,
    call,
    fixture,
    open_source_app,
    source_settings,
)
from tests.sources.fake_graph import (
    VERSION,
    GraphState,
    fake_graph,
    image_message,
    text_message,
    webhook,
)
from tests.sources.mail import message

pytestmark = pytest.mark.wire

# Workspaces made for one door: one whole run, then one per kill point (an intake makes fewer
# than this many writes).
RUNS = 28
DOMAIN = "in.fincap.test"
WHATSAPP_RECEIPT = (
    "Order confirmation from Contoso Books Ltd\nOrder number: CB-889120\n"
    "Date: 12 March 2024\nClean Code 1 GBP 29.99\nTotal GBP 29.99\nPaid with Visa ending 4242"
)


@pytest.fixture
def graph() -> Iterator[GraphState]:
    with fake_graph(ACCESS_TOKEN) as state:
        state.media["media-receipt"] = (fixture("receipt.png"), "image/png")
        yield state


def settings_for(graph: GraphState) -> dict[str, Any]:
    return {
        "inbound_domain": DOMAIN,
        "inbound_secret": INBOUND_SECRET,
        "whatsapp_app_secret": APP_SECRET,
        "whatsapp_access_token": ACCESS_TOKEN,
        "whatsapp_graph_url": f"{graph.base}/{VERSION}",
        "outbound_allow": "127.0.0.1",
    }


@pytest.fixture
async def app(wire_store: Store, registry: Registry, graph: GraphState) -> AsyncIterator[SourceApp]:
    async for opened in open_source_app(
        wire_store, registry, source_settings(**settings_for(graph))
    ):
        yield opened
    # A child killed inside a transaction leaves it open on the server until it expires: end
    # them all, or dropping the test's database waits for them.
    await wire_store.db.client.admin.command("killAllSessions", [])


async def tenants(store: Store, count: int) -> list[Tenant]:
    return [await make_tenant(store, f"t{n}@example.com", f"Tenant {n}") for n in range(count)]


async def door_input(store: Store, door: str, tenant: Tenant, n: int) -> dict[str, Any]:
    """The one thing each workspace's sender sends (and sends again after the kill)."""
    if door in ("smtp", "relay"):
        alias = (await store.inbound_addresses.get_or_create(tenant.org_id))["alias"]
        to = f"{alias}@{DOMAIN}"
        raw = message(
            to=to,
            message_id=f"<kill-{door}-{n}@example.org>",
            attachments=[("invoice.pdf", "application/pdf", fixture("text-layer.pdf"))],
        ).as_bytes()
        return {"to": to, "raw": raw.decode(), "secret": INBOUND_SECRET}
    if door == "upload":
        return {
            "fileName": f"receipt-{n}.pdf",
            "base64": base64.b64encode(fixture("text-layer.pdf")).decode(),
            "apiKey": tenant.api_key,
            "orgId": tenant.org_id,
        }
    phone = f"49151{n:08d}"
    await store.db["whatsapp_senders"].insert_one(
        {
            "_id": phone,
            "workspaceId": tenant.org_id,
            "userId": tenant.user_id,
            "createdAt": utcnow(),
        }
    )
    if door == "whatsapp":
        sent = text_message(f"wamid.kill-text-{n}", phone, WHATSAPP_RECEIPT)
    else:
        sent = image_message(f"wamid.kill-media-{n}", phone, "media-receipt")
    return {"payload": webhook([sent]), "appSecret": APP_SECRET}


class Killer:
    """``python -m tests.hardening.intake_kill``, started once for the module: each door's plan
    is a line on its stdin, answered by a line on its stdout."""

    def __init__(self, log: Path) -> None:
        self.log = log
        with log.open("ab") as errors:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.hardening.intake_kill"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )

    def failed(self, what: str) -> AssertionError:
        return AssertionError(f"{what}; its stderr ends:\n{self.log.read_text()[-4000:]}")

    def run(self, plan: dict[str, Any]) -> list[dict[str, Any]]:
        """The runs of one plan, as the program reports them. A hang is failed by the suite's
        per-test time limit (pytest-timeout), with the stacks."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(plan) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise self.failed(f"the program ended (code {self.process.wait()})")
            if line.startswith(RESULT_PREFIX):
                runs: list[dict[str, Any]] = json.loads(line[len(RESULT_PREFIX) :])
                return runs

    def close(self) -> None:
        """End of stdin ends the program; killed if it does not end."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def killer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Killer]:
    started = Killer(tmp_path_factory.mktemp("intake-kill") / "stderr.log")
    yield started
    started.close()


def kill_runs(
    killer: Killer, store: Store, door: str, inputs: list[dict[str, Any]], **options: Any
) -> list[dict[str, Any]]:
    plan = {
        "uri": store.db.client.address and _uri(store),
        "db": store.db.name,
        "door": door,
        "settings": options.pop("settings"),
        "inputs": inputs,
        **options,
    }
    runs = killer.run(plan)
    assert not runs[0]["killed"] and "error" not in runs[0] and runs[0]["writes"] > 0, runs[0]
    assert not runs[-1]["killed"], "more kill points than workspaces: raise RUNS"
    assert all("error" not in run for run in runs), runs
    return runs


def _uri(store: Store) -> str:
    host, port = store.db.client.address
    return f"mongodb://{host}:{port}/?directConnection=true"


async def whole_or_nothing(app: SourceApp, tenant: Tenant) -> tuple[int, int]:
    """Every item and document of the workspace belongs to a whole unit; (items, documents)."""
    db, org = app.store.db, tenant.org_id
    items = {
        item["_id"]: item for item in await db["activity"].find({"workspaceId": org}).to_list(None)
    }
    stored = {
        doc["_id"]: doc for doc in await db["documents"].find({"workspaceId": org}).to_list(None)
    }
    named = {doc_id for item in items.values() for doc_id in item["documentIds"]}
    assert named == set(stored), (items, sorted(stored))  # no document outside its item
    for doc in stored.values():
        assert doc["activityId"] in items, doc
    listed = await call(
        app.http,
        tenant,
        "documents.search",
        {"useSearch": False, "limit": 100, "archived": "include"},
    )
    assert sorted(d["id"] for d in listed["documents"]) == sorted(stored)
    counted = await call(app.http, tenant, "documents.count", {"archived": "include"})
    assert counted["count"] == len(stored)
    for doc_id in stored:
        await call(app.http, tenant, "documents.get", {"id": doc_id})
    events = await app.store.documents.events.after(org, ObjectId("0" * 24))
    created = sorted(e["documentId"] for e in events if e["type"] == "document.created")
    assert created == sorted(stored), events
    jobs = await db["jobs"].find({"workspaceId": org}).to_list(None)
    for doc_id, doc in stored.items():
        if doc["processingStatus"] not in TERMINAL:
            assert any(j["payload"].get("documentId") == doc_id for j in jobs), (doc_id, jobs)
    for item in items.values():
        if item["status"] == "queued" and not item["documentIds"]:  # media on its way
            assert any(j["payload"].get("activityId") == item["_id"] for j in jobs), (item, jobs)
    return len(items), len(stored)


async def finished_once(app: SourceApp, tenant: Tenant, door: str) -> None:
    """After the retry and the workers: one intake, each document finished, no duplicate link
    to anything but a whole document, no original without its document."""
    db, org = app.store.db, tenant.org_id
    items, documents = await whole_or_nothing(app, tenant)
    stored = await db["documents"].find({"workspaceId": org}).to_list(None)
    assert all(doc["processingStatus"] in TERMINAL for doc in stored), stored
    ids = {doc["_id"] for doc in stored}
    for doc in stored:
        assert doc.get("duplicateOf") in (None, *ids), doc
    if door == "upload":
        # Each upload is new (no key): a kill after the first was whole leaves two, the retry
        # a true duplicate of a whole document.
        assert items in (1, 2) and documents == items, stored
    else:
        assert items == 1 and documents == 1, stored  # the message taken once
        assert all(doc.get("duplicateOf") is None for doc in stored), stored
    files = await db["originals.files"].find({"metadata.workspaceId": org}).to_list(None)
    assert sorted(f["metadata"]["documentId"] for f in files) == sorted(ids)


async def until_settled(workers: WorkerPool, store: Store, workspaces: list[str]) -> None:
    """Run the workers until the workspaces' jobs are all done, letting time pass for retries.

    A job can wait on the clock: a media download the fake Graph answered late under load is
    retried after a backoff, and run_until_idle returns while it is not yet due. The wait is
    the design; here the clock is moved instead (the retry made due now), a few times at most,
    so a job that keeps failing still fails the test below, with its last error printed."""
    jobs = store.db["jobs"]
    waiting = {"workspaceId": {"$in": workspaces}, "status": {"$in": ["queued", "running"]}}
    for _ in range(6):
        await workers.run_until_idle()
        left = await jobs.find(waiting).to_list(None)
        if not left:
            return
        print("waiting on", [(j["kind"], j["attempts"], j.get("lastError")) for j in left])
        now = utcnow()
        await jobs.update_many({**waiting, "status": "queued"}, {"$set": {"runAfter": now}})
        await jobs.update_many({**waiting, "status": "running"}, {"$set": {"leaseUntil": now}})
        await store.db["job_queues"].update_many(
            {"_id": {"$in": workspaces}}, {"$set": {"dueAt": now}}
        )


def read_as_the_invoice(data: bytes, mime: str, **hints: Any) -> Analysis:
    """The analysis of the retried intakes' documents: each file read as the text-layer invoice
    (milliseconds). What is checked here is the intake, whole or absent, and each document
    finished; OCR of the WhatsApp photo, once for each of some 25 workspaces, took 10 s."""
    return analyze(fixture("text-layer.pdf"), "application/pdf", **hints)


@pytest.mark.parametrize("door", ["smtp", "relay", "upload", "whatsapp", "whatsapp-media"])
async def test_a_kill_between_any_two_intake_writes_leaves_it_whole_or_absent(
    app: SourceApp, graph: GraphState, killer: Killer, door: str
) -> None:
    store = app.store
    made = await tenants(store, RUNS)
    inputs = [await door_input(store, door, tenant, n) for n, tenant in enumerate(made)]
    runs = kill_runs(killer, store, door, inputs, settings=settings_for(graph))
    killed = made[1 : len(runs) - 1]
    print(door, [(run["killAt"], run.get("writes"), round(run["seconds"], 2)) for run in runs])
    assert len(killed) >= 5, runs  # every door writes at least this often

    # Right after the kills, before anything repairs the store: whole units or nothing.
    for tenant in killed:
        await whole_or_nothing(app, tenant)

    # A process starts on the host (the start-up check), then each sender tries again.
    await recover_at_start_up(app.services)
    for tenant in killed:
        await whole_or_nothing(app, tenant)
    # The media door's retry runs one job, which can be another workspace's document (its
    # analysis) rather than its own download: read as the invoice too (the photo's real OCR
    # there was about 6 of the module's CPU-seconds, py-spy).
    reader = Analyzer(function=read_as_the_invoice)
    doors = Doors(
        store, source_settings(**settings_for(graph)), app.app.state.services.registry, reader
    )
    for given in inputs[1 : len(runs) - 1]:
        await doors.door(door)(given)
    workers = doors.workers(reader)
    await until_settled(workers, store, [tenant.org_id for tenant in killed])
    for tenant in killed:
        await finished_once(app, tenant, door)
