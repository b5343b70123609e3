"""Helpers of the fault tests (issue 35): a store the test owns and can kill and start again,
``fincap serve`` and ``fincap worker`` as subprocesses on it, and waiting on events with
deadlines (never sleeping for a guessed time)."""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import psutil
import pymongo
from click.testing import CliRunner

from app.cli import main
from persistence.embedded import EmbeddedServer
from tests.live import Process, launch
from tests.sources.conftest import fixture

T = TypeVar("T")
FINCAP = [sys.executable, "-m", "app.cli"]


@dataclass
class OwnStore:
    """A SecantusDB process this test starts, kills and starts again on the same port and
    files: to ``fincap serve`` it is a MongoDB deployment (``MONGODB_URI``) that goes away."""

    storage: Path
    log: Path
    server: EmbeddedServer | None = None
    port: int = 0

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/fincap?directConnection=true"

    def start(self) -> None:
        self.server = EmbeddedServer(
            storage=str(self.storage), port=self.port, log_path=self.log
        ).start()
        self.port = self.server.port

    def kill(self) -> None:
        """SIGKILL (its supervisor dies, and the server with it); returns once the port is
        closed. A checkpoint first (``fsync``): the tests' own set-up writes were not
        journaled, and what is lost in a crash is the crash tests' subject, not this one's."""
        assert self.server is not None and self.server.process is not None
        client: pymongo.MongoClient[dict[str, Any]]
        with pymongo.MongoClient(self.uri, serverSelectionTimeoutMS=5000) as client:
            client.admin.command("fsync")
        self.server.process.send_signal(signal.SIGKILL)
        self.server.process.wait(timeout=30)
        until(lambda: not listening(self.port), 30, "the killed store still answers")

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def until(check: Callable[[], T], deadline_s: float, what: str, pause: float = 0.05) -> T:
    """``check()``'s first truthy value, polled until ``deadline_s`` (then ``what`` fails)."""
    deadline = time.monotonic() + deadline_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} (after {deadline_s:.0f} s)")
        time.sleep(pause)


def admin(env: Mapping[str, str], *args: str) -> dict[str, Any]:
    """``fincap admin …`` in this process; its JSON output."""
    result = CliRunner().invoke(main, ["admin", *args], env=dict(env), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    parsed: dict[str, Any] = json.loads(result.output)
    return parsed


def start_worker(env: Mapping[str, str], log: Path, store_port: int) -> Process:
    """``fincap worker`` with its output in ``log``; returns once it is connected to the store
    on ``store_port`` (it has opened it and started its workers), or fails."""
    offset = log.stat().st_size if log.exists() else 0
    process = launch([*FINCAP, "worker"], env, log)  # forked with the service imported

    def connected() -> bool:
        if process.poll() is not None:
            tail = log.read_bytes()[offset:].decode(errors="replace")[-2000:]
            raise AssertionError(f"fincap worker exited (code {process.returncode}):\n{tail}")
        try:
            connections = psutil.Process(process.pid).net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            return False
        return any(c.raddr and c.raddr.port == store_port for c in connections)

    until(connected, 300, "fincap worker did not connect to its store", pause=0.2)
    return process


def stop_timed(process: Process, deadline_s: float = 30) -> float:
    """SIGTERM ``process``; seconds until it exited (killed after ``deadline_s``)."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=deadline_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return time.monotonic() - started


def serve_env(data_dir: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "FINCAP_DATA_DIR": str(data_dir),
        "MONGODB_URI": "",
        "FINCAP_EXTRACTION_EXECUTOR": "thread",
        **extra,
    }


class Calls:
    """Capability calls made in one workspace, counted as the service meters them."""

    def __init__(self, base: str, boot: dict[str, str]) -> None:
        self.base = base
        self.headers = {
            "Authorization": f"Bearer {boot['apiKey']}",
            "X-Service-Org-Id": boot["orgId"],
        }
        self.made = 0

    def __call__(self, slug: str, body: dict[str, Any]) -> dict[str, Any]:
        answer = httpx.post(
            f"{self.base}/v1/capabilities/{slug}", json=body, headers=self.headers, timeout=60
        )
        self.made += 1
        assert answer.status_code == 200, answer.text
        result: dict[str, Any] = answer.json()["data"]["result"]
        return result


def processed(calls: Calls) -> None:
    """Upload a receipt and wait until it is processed (by a worker, or serve's own)."""
    pdf = base64.b64encode(fixture("text-layer.pdf")).decode()
    accepted = calls("files.upload", {"fileName": "northwind.pdf", "base64Data": pdf})
    until(
        lambda: (
            calls("documents.get", {"id": accepted["documentId"]})["document"]["processingStatus"]
            == "processed"
        ),
        120,
        "the worker did not process the upload",
        pause=0.3,
    )
