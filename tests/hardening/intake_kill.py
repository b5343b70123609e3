"""A program that runs one source's intake and dies by SIGKILL before its Nth write to the store.

``tests/hardening/test_atomic_intake.py`` starts it once for the module (``python -m
tests.hardening.intake_kill``) and sends it plans on stdin, one JSON line each: the store, the
door (``smtp``, ``relay``, ``upload``, ``whatsapp``, ``whatsapp-media``) and one input per run.
The program imports everything once (seconds of CPU, paid once for the five doors, not once a
door), then for each plan forks a fresh child per run: the first run counts the writes of a
whole intake, and run ``n`` after it kills its child with SIGKILL just before the child's
``n``-th write command (insert, update, delete, findAndModify, commitTransaction) leaves for the
store, until a run finishes without being killed. So every boundary between two writes of every
door is a kill point, wherever the code puts its writes, and nothing of the killed process runs
after its kill (no ``finally``, no clean-up): a real ``kill -9``. For each plan it prints one
line, ``RESULT_PREFIX`` then JSON: each run's kill point, whether it was killed, and the writes a
finished run made. It ends when stdin closes.

The doors are also used by the test itself, in its own process, to send the same input again
(the sender's retry).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import httpx
from motor.motor_asyncio import AsyncIOMotorClient
from pymongo import monitoring

from app.host.config import Settings
from app.host.workers import WorkerPool
from app.inbound.smtp import InboundHandler
from engines.connectors.whatsapp import sign
from engines.currency import default_rate_book
from persistence.store import Store
from resolvers import default_registry
from resolvers.framework.registry import Registry
from resolvers.services.processing.analyzer import Analyzer
from tests.conftest import app_on, worker_pool

# Marks the line that answers a plan (anything else a library prints to stdout is not one).
RESULT_PREFIX = "intake-kill-result "
WRITES = frozenset({"insert", "update", "delete", "findAndModify", "commitTransaction"})
Door = Callable[[dict[str, Any]], Awaitable[Any]]


class KillBeforeWrite(monitoring.CommandListener):
    """Counts write commands once armed; SIGKILLs this process as the ``kill_at``-th leaves."""

    def __init__(self, kill_at: int | None) -> None:
        self.kill_at = kill_at
        self.armed = False
        self.writes = 0

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if not self.armed or event.command_name not in WRITES:
            return
        self.writes += 1
        if self.kill_at is not None and self.writes >= self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


class Doors:
    """The service over one store, as a source reaches it. ``analyzer``: what the media door's
    worker analyses a document with, should the job it runs be one (the default: in a thread)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        registry: Registry,
        analyzer: Analyzer | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.analyzer = analyzer
        self.app = app_on(store, registry, settings)
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url="http://fincap.test"
        )

    @property
    def services(self) -> Any:
        return self.app.state.services

    async def smtp(self, given: dict[str, Any]) -> str:
        raw = given["raw"].encode()
        envelope = SimpleNamespace(
            original_content=raw, content=raw, rcpt_tos=[given["to"]], mail_from=None
        )
        return str(await InboundHandler(self.services).handle_DATA(None, None, envelope))  # type: ignore[arg-type]

    async def relay(self, given: dict[str, Any]) -> Any:
        response = await self.http.post(
            "/v1/inbound/email",
            params={"to": given["to"]},
            content=given["raw"].encode(),
            headers={
                "Authorization": f"Bearer {given['secret']}",
                "Content-Type": "message/rfc822",
            },
        )
        return {"status": response.status_code, "body": response.json()}

    async def upload(self, given: dict[str, Any]) -> Any:
        response = await self.http.post(
            "/v1/capabilities/files.upload",
            json={"fileName": given["fileName"], "base64Data": given["base64"]},
            headers={
                "Authorization": f"Bearer {given['apiKey']}",
                "X-Service-Org-Id": given["orgId"],
            },
        )
        return {"status": response.status_code, "body": response.json()}

    async def whatsapp(self, given: dict[str, Any]) -> Any:
        body = json.dumps(given["payload"]).encode()
        response = await self.http.post(
            "/v1/webhooks/whatsapp",
            content=body,
            headers={
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(given["appSecret"], body),
            },
        )
        return {"status": response.status_code, "body": response.json()}

    async def whatsapp_media(self, given: dict[str, Any]) -> Any:
        """The webhook (an item and its media job), then the media job: the download and the
        documents it becomes."""
        delivered = await self.whatsapp(given)
        pool = self.workers(self.analyzer)
        fetched = await pool.run_one(f"kill-test/{os.getpid()}")
        return {**delivered, "fetched": fetched}

    def workers(self, analyzer: Analyzer | None = None) -> WorkerPool:
        return worker_pool(self.store, like=self.services, analyzer=analyzer, count=1, lease_s=30)

    def door(self, name: str) -> Door:
        doors: dict[str, Any] = {
            "smtp": self.smtp,
            "relay": self.relay,
            "upload": self.upload,
            "whatsapp": self.whatsapp,
            "whatsapp-media": self.whatsapp_media,
        }
        door: Door = doors[name]
        return door


class Prepared:
    """The service over the store, built once before the children are forked (building the app
    takes a second): its client has not connected yet, so no thread runs when a child is
    forked, and each child's first call connects in the child. The exchange rates the media
    door's worker is built with are loaded here too (a quarter CPU-second a child, measured)."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.listener = KillBeforeWrite(None)
        client: AsyncIOMotorClient[Any] = AsyncIOMotorClient(
            plan["uri"], tz_aware=True, connect=False, event_listeners=[self.listener]
        )
        store = Store(client[plan["db"]])
        if plan.get("transactions") is False:
            store.units.supported_here = False
        self.doors = Doors(store, Settings(**plan["settings"]), default_registry())
        default_rate_book()  # loaded once, before the forks (the process's, functools.cache)

    async def run(self, given: dict[str, Any], kill_at: int | None) -> dict[str, Any]:
        self.listener.kill_at = kill_at
        self.listener.armed = True
        result = await self.doors.door(self.plan["door"])(given)
        self.listener.armed = False
        return {"writes": self.listener.writes, "result": result}


def fork_run(prepared: Prepared, given: dict[str, Any], kill_at: int | None) -> dict[str, Any]:
    """One run in a child process; what became of it."""
    if threading.active_count() != 1:
        raise RuntimeError("threads are running: forking now would not be safe")
    reading, writing = os.pipe()
    began = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(reading)
        try:
            outcome = asyncio.run(prepared.run(given, kill_at))
        except BaseException as exc:  # reported, not raised: the parent decides
            outcome = {"error": repr(exc)}
        os.write(writing, json.dumps(outcome, default=str).encode())
        os._exit(0)
    os.close(writing)
    chunks = []
    while chunk := os.read(reading, 65536):
        chunks.append(chunk)
    os.close(reading)
    _, status = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    outcome = json.loads(b"".join(chunks)) if chunks else {}
    return {"killAt": kill_at, "killed": killed, "seconds": time.monotonic() - began, **outcome}


def kill_runs(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """One plan: a whole intake, then one run killed before each of its writes in turn."""
    prepared = Prepared(plan)  # its own client, not connected here: forking stays safe
    inputs = list(plan["inputs"])
    runs = [fork_run(prepared, inputs[0], None)]  # a whole intake: how many writes
    for kill_at, given in enumerate(inputs[1:], start=1):
        run = fork_run(prepared, given, kill_at)
        runs.append(run)
        if not run["killed"]:
            break  # past the last write: every boundary was a kill point
    return runs


def main() -> None:
    for line in sys.stdin:
        if line.strip():
            runs = kill_runs(json.loads(line))
            print(RESULT_PREFIX + json.dumps(runs, default=str), flush=True)


if __name__ == "__main__":
    main()
