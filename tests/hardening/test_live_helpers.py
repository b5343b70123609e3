"""The helpers the fault tests' servers stand on (``tests/live.py``): a fresh data directory
is lent the help center vectors an earlier server computed, never over its own; ``discard``
leaves nothing of a server running, its children included."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests import live
from tests.hardening.faults import until


def test_help_vectors_are_lent_to_a_fresh_data_directory_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    earlier = tmp_path / "earlier"
    (earlier / "help_center").mkdir(parents=True)
    (earlier / "help_center" / "help-vectors-abc.npy").write_bytes(b"computed")
    monkeypatch.setattr(live, "_served_data_dirs", [tmp_path / "never-served", earlier])

    fresh = tmp_path / "fresh"
    live.lend_help_vectors(fresh)
    assert (fresh / "help_center" / "help-vectors-abc.npy").read_bytes() == b"computed"

    own = tmp_path / "own"
    (own / "help_center").mkdir(parents=True)
    (own / "help_center" / "help-vectors-def.npy").write_bytes(b"its own")
    live.lend_help_vectors(own)
    assert sorted(path.name for path in (own / "help_center").iterdir()) == ["help-vectors-def.npy"]


def test_discard_leaves_neither_the_server_nor_its_children(tmp_path: Path) -> None:
    # A stand-in server with a child of its own, as fincap serve has its store; it says when
    # the child runs.
    started = tmp_path / "child-started"
    script = (
        "import pathlib, subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"pathlib.Path({str(started)!r}).touch()\n"
        "time.sleep(600)\n"
    )
    server = subprocess.Popen([sys.executable, "-c", script])
    children: list[psutil.Process] = []
    try:
        until(lambda: started.exists() or server.poll() is not None, 120, "no child started")
        assert server.poll() is None, "the stand-in server ended"
        children = psutil.Process(server.pid).children(recursive=True)
        assert len(children) == 1, children
        live.discard(server)
        assert server.poll() is not None
        [child] = children
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    finally:  # whatever failed above, nothing of the stand-in is left running
        if server.poll() is None:
            server.kill()
        server.wait()
        for child in children:
            with contextlib.suppress(psutil.NoSuchProcess):
                child.kill()
