"""``pid_alive``: whether a process still runs, as the leases, the embedded store's owner and the
analysis children ask it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from persistence.lease_owners import pid_alive


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]


def test_a_running_process_is_alive_and_a_reaped_one_is_not() -> None:
    assert pid_alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not pid_alive(child.pid)
    assert not pid_alive(0) and not pid_alive(-1)


def test_an_exited_child_not_yet_reaped_is_not_alive() -> None:
    """A zombie has exited: a server sent SIGTERM by someone other than its parent (the next
    ``fincap serve`` stopping an orphan) must count as stopped before its parent reaps it."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        # Until it has exited, without reaping it (WNOWAIT): from then on it is a zombie.
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
        assert _state(child.pid) == "Z"
        assert not pid_alive(child.pid)
    finally:
        child.wait()
