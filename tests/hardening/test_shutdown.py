"""SIGTERM stops everything within 10 s, the store up or down, and keeps the counts it holds
(issue 35, F3 and O6): ``fincap serve`` and ``fincap worker`` as a supervisor runs them, stopped
together. Before: 71-73 s for serve and 32-39 s for a worker with the store gone, "3 calls lost";
a worker stopped with the serve that owns the embedded store outlived it by 30 s."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pymongo
import pytest
from pymongo.collection import Collection

from persistence.embedded import EmbeddedServer
from tests.hardening.faults import (
    FINCAP,
    Calls,
    OwnStore,
    admin,
    listening,
    processed,
    serve_env,
    start_worker,
    stop_timed,
    until,
)
from tests.live import Process, discard, start_serve, stop

pytestmark = pytest.mark.wire

STOP_WITHIN_S = 10.0


def stop_together(*processes: Process) -> list[float]:
    """SIGTERM every process at once; the seconds each took to exit."""
    took = [0.0] * len(processes)

    def one(index: int) -> None:
        took[index] = stop_timed(processes[index], deadline_s=60)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(processes))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return took


def api_calls(uri: str, org_id: str) -> int:
    client: pymongo.MongoClient[dict[str, Any]]
    with pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000) as client:
        usage: Collection[dict[str, Any]] = client.get_default_database("fincap")["usage_daily"]
        rows: list[dict[str, Any]] = list(usage.find({"workspaceId": org_id}))
        return sum(int(row.get("apiCalls", 0)) for row in rows)


def test_sigterm_with_the_store_down_stops_serve_and_a_worker_within_10_s_keeping_the_counts(
    tmp_path: Path,
) -> None:
    store = OwnStore(tmp_path / "store", tmp_path / "store.log")
    store.start()
    data_dir = tmp_path / "data"
    env = serve_env(
        data_dir,
        MONGODB_URI=store.uri,
        FINCAP_WORKERS="0",
        # The counts stay in the process until it stops: the stop must write or keep them.
        FINCAP_USAGE_FLUSH_SECONDS="300",
    )
    boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
    log = tmp_path / "serve.log"
    served = start_serve([*FINCAP, "serve"], env, log)
    worker = None
    try:
        worker = start_worker(env, tmp_path / "worker.log", store.port)
        calls = Calls(served.base, boot)
        processed(calls)
        calls("documents.search", {"useSearch": False})
        assert calls.made >= 3

        store.kill()
        serve_took, worker_took = stop_together(served.process, worker)
        assert serve_took <= STOP_WITHIN_S, (serve_took, log.read_text()[-3000:])
        assert worker_took <= STOP_WITHIN_S, worker_took
        kept = list(data_dir.glob("usage-pending-*.json"))
        assert kept, "the counts were neither written nor kept"

        # The store back and fincap started again: the kept counts are written, once.
        store.start()
        assert api_calls(store.uri, boot["orgId"]) == 0
        again = start_serve([*FINCAP, "serve"], env, log)
        try:
            assert api_calls(store.uri, boot["orgId"]) == calls.made
            assert not list(data_dir.glob("usage-pending-*"))
        finally:
            discard(again.process)  # its start was the point, not its stop
    finally:
        stop(served.process)
        if worker is not None:
            stop(worker)
        store.stop()
    sys.stderr.write(
        f"store down: serve stopped in {serve_took:.2f} s, worker in {worker_took:.2f} s\n"
    )


def test_a_worker_left_without_its_embedded_store_still_stops_within_10_s(
    tmp_path: Path,
) -> None:
    """O6: the worker joined the store ``fincap serve`` owns; serve is stopped (its store goes
    with it) and the worker's SIGTERM comes after: it must not wait out the driver for a store
    that is gone (before: 30 s)."""
    data_dir = tmp_path / "data"
    env = serve_env(data_dir, FINCAP_WORKERS="0", FINCAP_USAGE_FLUSH_SECONDS="300")
    served = start_serve([*FINCAP, "serve"], env, tmp_path / "serve.log")
    worker = None
    try:
        # Joins serve's store (before serve, it would start and stop a private one).
        boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
        uri = (data_dir / "server.json").read_text()
        port = int(uri.split("127.0.0.1:")[1].split("/")[0])
        worker = start_worker(env, tmp_path / "worker.log", port)
        calls = Calls(served.base, boot)
        processed(calls)
        serve_took = stop_timed(served.process, deadline_s=60)
        assert serve_took <= STOP_WITHIN_S, serve_took
        # The store went with serve; the worker's next claim finds nobody there.
        until(lambda: not listening(port), 30, "the embedded store outlived serve")
        worker_took = stop_timed(worker, deadline_s=60)
        assert worker_took <= STOP_WITHIN_S, worker_took
    finally:
        stop(served.process)
        if worker is not None:
            stop(worker)
    # The store was up when serve stopped: its counts are in the store.
    private = EmbeddedServer(storage=str(data_dir / "db")).start()
    try:
        assert api_calls(private.uri, boot["orgId"]) == calls.made
    finally:
        private.stop()
    sys.stderr.write(
        f"embedded store: serve stopped in {serve_took:.2f} s, then the worker in "
        f"{worker_took:.2f} s\n"
    )
