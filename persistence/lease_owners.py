"""Who holds a job's lease: a process named so that others can tell whether it still lives.

A worker's lease owner is ``<host>/<pid>/<start>/<worker>``: the host name, the process id, the
process's start time (Linux: clock ticks after boot, from ``/proc/<pid>/stat``; elsewhere 0) and
the worker's number in that process. A pid alone is not enough: after a restart the same pid can
belong to another process; the start time tells them apart. A process starting up takes back at
once the leases of owners on its own host that are gone (``kill -9``, a crash, the OOM killer)
instead of waiting for the lease to expire; owners on other hosts cannot be looked at from here,
so their leases expire as before.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

SEPARATOR = "/"  # never part of a host name


def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks after boot, Linux), 0 where the system
    does not say, None when there is no such process."""
    try:
        fields = _stat_after_name(pid)
    except FileNotFoundError:
        return None
    except OSError:
        return 0 if pid_alive(pid) else None
    return int(fields[19])  # field 22 of the line: starttime


def _stat_after_name(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (from field 3, the state, on).
    The name (field 2) may hold spaces and parentheses: what follows the last ")" is counted."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()


def pid_alive(pid: int) -> bool:
    """Whether a process ``pid`` is running (on this host). A zombie, a process that has exited
    but that its parent has not reaped yet, is not: whoever waits for a process to stop (a server
    sent SIGTERM, an owner that died) would otherwise wait for the parent instead."""
    if pid <= 0:  # kill(0, …) would address our own process group
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        return _stat_after_name(pid)[0] == "Z"  # field 3 of the line: the state
    except OSError:  # no /proc here, or the process is gone: not a zombie we can see
        return False


def _start_of(pid: int) -> int | None:
    if Path("/proc/self/stat").exists():
        return process_start(pid)
    return 0 if pid_alive(pid) else None


@dataclass(frozen=True)
class LeaseOwner:
    """One process that leases jobs."""

    host: str
    pid: int
    start: int

    @classmethod
    def current(cls) -> LeaseOwner:
        pid = os.getpid()
        return cls(socket.gethostname(), pid, _start_of(pid) or 0)

    def worker(self, name: str | int) -> str:
        """The lease owner string of worker ``name`` of this process."""
        return SEPARATOR.join((self.host, str(self.pid), str(self.start), str(name)))

    @classmethod
    def of(cls, owner: str) -> LeaseOwner | None:
        """The process behind a lease owner string; None for one in another format (a test's
        name, or a lease taken before owners were named this way)."""
        parts = owner.split(SEPARATOR)
        if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
            return None
        return cls(parts[0], int(parts[1]), int(parts[2]))

    def gone(self) -> bool:
        """Whether this process is known to have ended: only answerable on its own host."""
        if self.host != socket.gethostname():
            return False
        start = _start_of(self.pid)
        return start is None or (self.start != 0 and start != self.start)


__all__ = ["LeaseOwner", "pid_alive", "process_start"]
