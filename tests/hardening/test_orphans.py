"""Item 9: children die with ``fincap serve``, and a restart owns what it runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from persistence.embedded import STATE_FILE, EmbeddedServer, running_server_uri
from tests.hardening.faults import Calls, admin, processed
from tests.live import STOP_GRACE_S, Served, discard, start_serve

pytestmark = pytest.mark.wire

Serve = Callable[..., Served]
FORKED = "multiprocessing.forkserver"


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Serve]:
    """Starts ``fincap serve`` on a data directory; with ``analysis_process`` (the default), its
    analysis runs in processes (they start with the first file read; a start that only the
    store matters to analyses in a thread). Every server started is killed, with its children, when
    the test ends, whatever its outcome (``discard``: no test here checks a clean stop)."""
    started: list[Served] = []

    def start(data_dir: Path, analysis_process: bool = True) -> Served:
        env = {
            **os.environ,
            "FINCAP_DATA_DIR": str(data_dir),
            "MONGODB_URI": "",
            "FINCAP_EXTRACTION_EXECUTOR": "process" if analysis_process else "thread",
            "FINCAP_WORKERS": "1",
        }
        log = tmp_path / f"serve-{len(started)}.log"
        # A new interpreter, as in production: the process tree is what these tests check.
        served = start_serve([sys.executable, "-m", "app.cli", "serve"], env, log, fresh=True)
        started.append(served)
        return served

    yield start
    for served in started:
        discard(served.process)


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    def running(process: psutil.Process) -> bool:
        try:
            return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    return [p for p in processes if running(p)]


def wait_until_gone(
    processes: list[psutil.Process], seconds: float = STOP_GRACE_S
) -> list[psutil.Process]:
    """The processes still alive after ``seconds`` (returns as soon as none is)."""
    deadline = time.monotonic() + seconds
    pause = 0.05
    while alive(processes) and time.monotonic() < deadline:
        time.sleep(pause)
        pause = min(pause * 2, 1.0)
    return alive(processes)


@pytest.fixture
def stop_leftovers() -> Iterator[list[psutil.Process]]:
    """Processes killed at the end (tests ask for it before ``serve``, so the servers have
    had their clean stop first)."""
    started: list[psutil.Process] = []
    yield started
    for process in alive(started):
        process.kill()


def test_kill_9_of_serve_takes_every_child_along(
    tmp_path: Path, stop_leftovers: list[psutil.Process], serve: Serve
) -> None:
    data_dir = tmp_path / "data"
    served = serve(data_dir)
    server = served.process
    # The analysis pool starts with the first file (not for readiness): one read, by serve's
    # worker, in an operator's workspace made on serve's running store.
    env = {**os.environ, "FINCAP_DATA_DIR": str(data_dir), "MONGODB_URI": ""}
    boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
    processed(Calls(served.base, boot))
    children = psutil.Process(server.pid).children(recursive=True)
    stop_leftovers.extend(children)
    commands = [" ".join(child.cmdline()) for child in children]
    assert any("secantus" in c for c in commands), commands  # the embedded database
    assert any("resource_tracker" in c for c in commands), commands
    # The analysis process: forked by the server's forkserver (app.host.processing), so a
    # grandchild; the kernel's signal reaches it through the forkserver, which ends with serve.
    [forkserver] = [
        child
        for child in children
        if child.ppid() == server.pid and FORKED in " ".join(child.cmdline())
    ]
    assert forkserver.children(), commands

    server.send_signal(signal.SIGKILL)
    server.wait(timeout=STOP_GRACE_S)
    survivors = wait_until_gone(children)
    assert not survivors, [" ".join(p.cmdline()) for p in survivors]

    # The restart starts (and announces) a database of its own.
    again = serve(data_dir, analysis_process=False).process
    stop_leftovers.extend(psutil.Process(again.pid).children(recursive=True))
    state = json.loads((data_dir / STATE_FILE).read_text())
    assert state["owner"] == again.pid
    assert psutil.Process(state["pid"]).ppid() == again.pid


def test_a_server_whose_owner_died_is_stopped_not_joined(
    tmp_path: Path, stop_leftovers: list[psutil.Process], serve: Serve
) -> None:
    """Where the kernel cannot tie the database to its owner, the next start cleans up."""
    data_dir = (tmp_path / "data").resolve()
    # An orphan as an older fincap (or another OS) left it: a live server, a dead owner.
    orphan = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"]  # a stand-in for a dead owner
    )
    orphan.kill()
    orphan.wait()
    server = EmbeddedServer(storage=str(data_dir / "db")).start()
    assert server.process is not None
    stop_leftovers.append(psutil.Process(server.process.pid))
    state = {"pid": server.process.pid, "uri": server.uri, "owner": orphan.pid}
    (data_dir / STATE_FILE).write_text(json.dumps(state))

    assert running_server_uri(data_dir) is None  # nobody joins it
    restarted = serve(data_dir, analysis_process=False).process
    assert server.process.wait(timeout=STOP_GRACE_S) is not None  # stopped by the new serve
    new_state = json.loads((data_dir / STATE_FILE).read_text())
    assert new_state["owner"] == restarted.pid and new_state["pid"] != server.process.pid
