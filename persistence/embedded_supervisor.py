"""Keeping the embedded store running: ``fincap serve`` starts it again when it dies or its
storage engine stops.

SecantusDB is a child process. Killed, or crashed, it would leave every call failing until
someone restarted ``fincap serve``; after a fatal WiredTiger error (``WT_PANIC``, e.g. the disk
filled up) it even lives on, answers ``ping`` and fails every read and write. The supervisor
looks every ``interval`` seconds: the process gone, the panic in its log, or plain reads failing
with a server error ``FATAL_AFTER`` times in a row (the log, on the disk that filled, may not
say it), and the server is started again on the same port and files (the driver reconnects by
itself, nothing else changes). A start that fails (the disk still full) is tried again after a
pause that doubles up to ``MAX_BACKOFF_S``. What it does shows on ``/healthz``
(``StoreHealth``) and in the log.

A MongoDB deployment (``MONGODB_URI``) is not fincap's to restart: its own supervisor is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import pymongo

from persistence.embedded import EmbeddedServer, EmbeddedStoreError, SharedStore
from persistence.health import StoreHealth

log = logging.getLogger("fincap.store")

INTERVAL_S = 0.5
FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 30.0
# Plain reads failing with a server error this many times in a row: the storage is broken.
FATAL_AFTER = 2


class StorageProbe:
    """A plain read against the server from a client of its own."""

    def __init__(self, uri: str) -> None:
        self._client: pymongo.MongoClient[dict[str, Any]] = pymongo.MongoClient(
            uri, directConnection=True, serverSelectionTimeoutMS=1000, connectTimeoutMS=1000
        )
        self._failures = 0

    def storage_failed(self) -> bool:
        """Whether plain reads failed with a server error ``FATAL_AFTER`` times in a row (a
        server that does not answer at all is not this: the process check sees a dead one)."""
        try:
            self._client["fincap"]["workspaces"].find_one({}, {"_id": 1})
        except pymongo.errors.OperationFailure:
            self._failures += 1
        except pymongo.errors.PyMongoError:
            return False
        else:
            self._failures = 0
        return self._failures >= FATAL_AFTER

    def reset(self) -> None:
        self._failures = 0

    def close(self) -> None:
        self._client.close()


def failure_of(server: EmbeddedServer, probe: StorageProbe) -> str | None:
    """Why the server must be started again, or None. Blocking: run it in a thread."""
    if not server.running:
        code = server.process.returncode if server.process else None
        return f"the database process ended (exit status {code})"
    fatal = server.fatal_error()
    if fatal is None and probe.storage_failed():
        fatal = "the database fails every read (its storage engine stopped; is the disk full?)"
    return fatal


async def supervise(shared: SharedStore, health: StoreHealth, interval: float = INTERVAL_S) -> None:
    """Restart ``shared``'s server whenever it died or its storage failed; runs until
    cancelled."""
    server = shared.server
    assert server is not None, "only the process that started the server supervises it"
    probe = StorageProbe(server.uri)
    try:
        while True:
            await asyncio.sleep(interval)
            reason = await asyncio.to_thread(failure_of, server, probe)
            if reason is not None:
                await restart(shared, health, reason)
                probe.reset()
    finally:
        probe.close()


async def restart(shared: SharedStore, health: StoreHealth, reason: str) -> None:
    """Start the server again, as often as it takes, pausing longer after each failure."""
    log.error("embedded store failed; restarting it", extra={"reason": reason})
    health.restarting(reason)
    backoff = FIRST_BACKOFF_S
    while True:
        try:
            await asyncio.to_thread(shared.restart)
        except EmbeddedStoreError as exc:
            log.error(
                "embedded store did not start again; retrying",
                extra={"error": str(exc), "retryInSeconds": backoff},
            )
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)
            continue
        # It answered before ``start`` returned; the driver may never have seen it down, and
        # would then tell nothing.
        health.set("up")
        log.warning("embedded store restarted", extra={"restarts": health.restarts})
        return


@contextlib.asynccontextmanager
async def supervising(shared: SharedStore, health: StoreHealth) -> AsyncIterator[None]:
    """``supervise`` for as long as the block runs, when this process owns the server."""
    if shared.server is None:
        yield
        return
    task = asyncio.create_task(supervise(shared, health))
    try:
        yield
    finally:
        # The supervisor first, so that its probe's client closes while the server still answers
        # (a client whose server is gone waits out the server selection, 1 s, to end its
        # sessions); then the server: a restart in progress, in a thread the cancelled task no
        # longer awaits, gives up and stops what it started.
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        shared.server.close()
