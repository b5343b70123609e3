"""Item 9: children die with ``fincap serve``, and a restart owns what it runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from persistence.embedded import STATE_FILE, EmbeddedServer, free_port, running_server_uri
from tests.test_cli_serve import wait_ready

pytestmark = pytest.mark.wire


def serve(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "FINCAP_DATA_DIR": str(data_dir),
        "MONGODB_URI": "",
        "FINCAP_EXTRACTION_EXECUTOR": "process",
        "FINCAP_WORKERS": "1",
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    wait_ready(base, process)  # readiness starts the analysis process
    return process, base


def alive(processes: list[psutil.Process]) -> list[psutil.Process]:
    return [p for p in processes if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]


def wait_until_gone(processes: list[psutil.Process], seconds: float = 30) -> list[psutil.Process]:
    deadline = time.monotonic() + seconds
    while alive(processes) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(processes)


@pytest.fixture
def stop_leftovers() -> Iterator[list[psutil.Process]]:
    started: list[psutil.Process] = []
    yield started
    for process in alive(started):
        process.kill()


def test_kill_9_of_serve_takes_every_child_along(
    tmp_path: Path, stop_leftovers: list[psutil.Process]
) -> None:
    data_dir = tmp_path / "data"
    server, _ = serve(data_dir)
    children = psutil.Process(server.pid).children(recursive=True)
    stop_leftovers.extend(children)
    commands = [" ".join(child.cmdline()) for child in children]
    assert any("secantus" in c for c in commands), commands  # the embedded database
    assert any("spawn_main" in c for c in commands), commands  # the analysis process
    assert any("resource_tracker" in c for c in commands), commands

    server.send_signal(signal.SIGKILL)
    server.wait(timeout=30)
    survivors = wait_until_gone(children)
    assert not survivors, [" ".join(p.cmdline()) for p in survivors]

    # The restart starts (and announces) a database of its own.
    again, _ = serve(data_dir)
    try:
        stop_leftovers.extend(psutil.Process(again.pid).children(recursive=True))
        state = json.loads((data_dir / STATE_FILE).read_text())
        assert state["owner"] == again.pid
        assert psutil.Process(state["pid"]).ppid() == again.pid
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=60)


def test_a_server_whose_owner_died_is_stopped_not_joined(
    tmp_path: Path, stop_leftovers: list[psutil.Process]
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
    restarted, _ = serve(data_dir)
    try:
        assert server.process.wait(timeout=30) is not None  # stopped by the new serve
        new_state = json.loads((data_dir / STATE_FILE).read_text())
        assert new_state["owner"] == restarted.pid and new_state["pid"] != server.process.pid
    finally:
        restarted.send_signal(signal.SIGTERM)
        restarted.wait(timeout=60)
