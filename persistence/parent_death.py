"""Child processes that die with their parent, even when the parent is killed with SIGKILL.

Linux's ``prctl(PR_SET_PDEATHSIG)`` asks the kernel to signal a process when its parent dies;
the setting survives ``exec``. A ``kill -9`` of ``fincap serve`` used to leave the embedded
database and the extraction child running (and the next ``fincap serve`` joined the orphaned
database). Two ways in:

- ``die_with_parent(signal)`` from inside a Python child (the analysis processes' initializer);
- ``launcher_command(argv)`` for a program we start (the embedded database): this module runs
  first, sets the signal, and ``exec``s the program in the same process.

Elsewhere than Linux both are no-ops; a restart then still cleans up (``persistence/embedded``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """Have the kernel send ``sig`` to this process when its parent dies; exit at once if the
    parent (``parent``, when known) is already gone."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    # The parent may have died before the call: then nobody will ever send the signal.
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def launcher_command(argv: list[str], sig: int = signal.SIGTERM) -> list[str]:
    """``argv`` wrapped so that the started program gets ``sig`` when this process dies."""
    if sys.platform != "linux":
        return argv
    return [sys.executable, "-m", __name__, str(os.getpid()), str(int(sig)), "--", *argv]


def _main(args: list[str]) -> None:
    parent, sig, separator, *argv = args
    if separator != "--" or not argv:
        raise SystemExit("usage: python -m persistence.parent_death PARENT_PID SIGNAL -- PROGRAM…")
    die_with_parent(int(sig), int(parent))
    os.execv(argv[0], argv)


if __name__ == "__main__":
    _main(sys.argv[1:])
