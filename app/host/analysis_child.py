"""Set-up of each analysis process (the extraction pool): a memory limit, and death with its
parent.

OCR and PDF rendering of one hostile file can ask for gigabytes; under ``RLIMIT_DATA`` the
allocation fails inside that process (a ``MemoryError`` or a failed render, reported as this
file's failure) or, at worst, the process dies and the pool is replaced
(``resolvers.services.processing.analyzer.Analyzer``) — the server and the other files are not
touched. ``RLIMIT_DATA`` counts the heap and private mappings (what decoding and rendering
allocate), not the shared libraries and model files mapped in, so the limit means memory, not
address space.

An analysis process is forked by its owner's forkserver (``app.host.processing``), so its
parent is the forkserver, not the owner. The kernel kills it when the forkserver dies, and the
forkserver ends as soon as the owner does: it waits on a pipe whose writing end each of its
children inherits, and it reads end-of-file only once every holder is gone. Each analysis
process closes its copy first, so the owner alone keeps the forkserver, and with it the
analysis processes, alive.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
from multiprocessing import forkserver

from engines.parent_death import die_with_parent
from persistence.lease_owners import pid_alive


def _release_forkserver() -> None:
    """Close this process's copy of its forkserver's "alive" pipe (inherited at the fork; kept
    by ``multiprocessing`` in a private attribute, there since Python 3.4), so the forkserver
    does not outlive the owner because of this process. None when not forked by one."""
    state = vars(forkserver._forkserver)
    fd = state.get("_forkserver_alive_fd")
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
        state["_forkserver_alive_fd"] = None


def prepare_analysis_process(owner_pid: int, memory_limit_bytes: int | None) -> None:
    """``ProcessPoolExecutor`` initializer: runs first in every analysis process. ``owner_pid``
    is the process whose pool it belongs to."""
    _release_forkserver()
    parent = os.getppid()  # the forkserver (the owner itself, were the process spawned)
    die_with_parent(signal.SIGKILL, parent)  # stateless: nothing to flush
    # The owner may have died before the signal was armed, its forkserver still ending.
    if parent != owner_pid and not pid_alive(owner_pid):
        os._exit(1)
    if memory_limit_bytes:
        resource.setrlimit(resource.RLIMIT_DATA, (memory_limit_bytes, memory_limit_bytes))
