"""Child processes that die with their parent, even when the parent is killed with SIGKILL.

Linux's ``prctl(PR_SET_PDEATHSIG)`` asks the kernel to signal a process when its parent dies. A
``kill -9`` of ``fincap serve`` used to leave the embedded database and the extraction child
running (and the next ``fincap serve`` joined the orphaned database). Two ways in:

- ``die_with_parent(signal)`` from inside a Python child (the analysis processes' initializer:
  they hold no state, so SIGKILL);
- ``launcher_command(argv)`` for a program we start that should stop cleanly (the embedded
  database): this module supervises it. It learns of the parent's death by PDEATHSIG, asks the
  program to stop with SIGTERM, and kills it after a grace period (SecantusDB's SIGTERM handler
  does not always return); the program itself gets SIGKILL should the supervisor die first.
  ``stop`` of the supervisor (SIGTERM) does the same, so callers treat it as the program.

Elsewhere than Linux both are no-ops; a restart then still cleans up (``persistence/embedded``).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import signal
import subprocess
import sys
from types import FrameType

PR_SET_PDEATHSIG = 1
GRACE_S = 10.0


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


def launcher_command(argv: list[str], grace_s: float = GRACE_S) -> list[str]:
    """``argv`` run under a supervisor that stops it when this process dies."""
    if sys.platform != "linux":
        return argv
    return [sys.executable, "-m", __name__, str(os.getpid()), str(grace_s), "--", *argv]


def supervise(parent: int, grace_s: float, argv: list[str]) -> int:
    """Run ``argv``; stop it (SIGTERM, then SIGKILL after ``grace_s``) when ``parent`` dies or
    when this supervisor is asked to stop. Returns the program's exit status."""
    child: subprocess.Popen[bytes] | None = None

    # The handlers only send signals: the main thread stays in child.wait() (Popen's methods
    # are not reentrant) and returns once the program has exited.
    def stop(signum: int, frame: FrameType | None) -> None:
        if child is None:
            os._exit(0)
        with contextlib.suppress(ProcessLookupError):
            os.kill(child.pid, signal.SIGTERM)
        signal.alarm(max(1, math.ceil(grace_s)))

    def force(signum: int, frame: FrameType | None) -> None:
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)

    signal.signal(signal.SIGALRM, force)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    die_with_parent(signal.SIGTERM, parent)
    supervisor = os.getpid()
    # This process has a single thread, so a pre-exec hook is safe here.
    child = subprocess.Popen(argv, preexec_fn=lambda: die_with_parent(signal.SIGKILL, supervisor))
    return child.wait()


if __name__ == "__main__":
    parent, grace, separator, *program = sys.argv[1:]
    if separator != "--" or not program:
        raise SystemExit("usage: python -m engines.parent_death PARENT_PID GRACE_S -- PROGRAM…")
    sys.exit(supervise(int(parent), float(grace), program))
