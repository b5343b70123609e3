"""Run a Python script, or a ``fincap`` command, as a process of its own that starts with the
service already imported.

``python bench/NAME.py`` spends about 3 s of CPU importing the service (the app, its faces, the
extraction engines) before its first line of work; the suite runs thirty such scripts. Here each
run is a process forked from a server process that imported those modules once
(multiprocessing's ``forkserver``, with the service as its preload), then runs the script as
``python`` would: ``__name__ == "__main__"``, its own ``sys.argv``, its folder first on
``sys.path``, its own working directory, environment and process group (so a timeout kills it
and whatever it started together), and its exit status from ``SystemExit``. A script's own
imports still run: a name it imports that no longer exists fails it here as it would anywhere.

``start_fincap`` does the same for a long-running ``fincap`` command (``fincap serve``): the
command's ``main`` runs in the forked process, its output appended to a log, and the caller gets
``subprocess.Popen``'s interface to it (``Forked``). Called in a script, it forks from the same
server as the script (``_fork_from``).

What differs from a fresh interpreter is only what was imported before the script's first line;
a module that read the environment at import time would read the test process's (none of the
service's do: settings are read when the app is built).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import runpy
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing import forkserver as server_state
from multiprocessing import resource_tracker
from multiprocessing.context import ForkServerContext
from multiprocessing.forkserver import main as forkserver_main
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType

from app.host.config import Settings
from app.host.main import create_app
from app.host.processing import analysis_context, preload_too
from engines.currency import default_rate_book
from engines.ranking import embeddings

# What the scripts import first; everything they share comes in with these. This module last:
# imported by the forkserver, it loads what every forked process loads first (``_warm``).
PRELOAD = ["app.cli", "app.host.main", "persistence.embedded", "uvicorn", __name__]

_context: list[ForkServerContext] = []


def _preloading() -> bool:
    """Whether this module is being imported by multiprocessing's forkserver, as a preload."""
    frame: FrameType | None = sys._getframe()
    while frame is not None:
        if frame.f_code is forkserver_main.__code__:
            return True
        frame = frame.f_back
    return False


def _warm() -> None:
    """In the forkserver, before any fork: the exchange rates (0.22 CPU-s) and the embedding
    model (0.36 CPU-s, measured) that a forked ``fincap serve`` (its help center at start-up),
    ``fincap worker`` or script loads first, once for them all; and the process's registry
    with what an app derives from it (``default_registry``: the GraphQL schema, the MCP server,
    the routes; 0.7 CPU-s), which every forked ``fincap serve`` built again. Each is the
    process's own cache (``functools.cache``, ``load_embedder``, ``Registry.derived``),
    inherited by the fork. None starts a thread (the model runs on one), so forking after them
    stays safe."""
    default_rate_book()
    if embeddings.available():
        embeddings.load_embedder()
    create_app(Settings())  # an app's derived artefacts, made on the process's registry


if _preloading():
    # Only a head start: should it fail, each process loads them itself, as without it (and an
    # exception here would end the forkserver, and every start after it).
    with contextlib.suppress(Exception):
        _warm()
else:
    # A process has one forkserver: the analysis pools this process makes (a test's
    # ``app.host.processing.make_executor``) fork from it too. Whichever starts it first, it
    # imports both lists (the product's: the extraction engines, rapidocr, onnxruntime). Not
    # in the forkserver itself: the processes forked from it start their own analysis
    # forkserver, with the product's list alone.
    preload_too(PRELOAD)


@dataclass(frozen=True)
class Finished:
    """A script's exit status and what it printed."""

    returncode: int
    stdout: str
    stderr: str


class ScriptTimedOut(Exception):
    """The script ran past its limit; it and its session were killed. Carries its output."""

    def __init__(self, stdout: str, stderr: str) -> None:
        super().__init__("timed out")
        self.stdout, self.stderr = stdout, stderr


def forkserver() -> ForkServerContext:
    """This process's forkserver context (its server starts with the first script)."""
    if not _context:
        _context.append(analysis_context())
    return _context[0]


def _server_address() -> str:
    """The address of this process's forkserver, started (with its preload list) if it was
    not."""
    forkserver()  # sets the preload list, which must come before the server starts
    server_state.ensure_running()
    address: str = vars(server_state._forkserver)["_forkserver_address"]
    return address


def _fork_from(address: str) -> None:
    """In a script's process: fork what it starts (``start_fincap``: a ``fincap serve``, a
    worker; an analysis pool) from the forkserver at ``address``, the one the script itself
    was forked from, which has the service imported. Without it the script's first fork
    started a server of its own, with the product's preload list only (``preload_too`` is not
    called in a forked process), and each ``fincap serve`` forked from that one imported the
    service again: ~1 CPU-s for the server and ~3 for each serve, in every bench that starts one.

    multiprocessing keeps its client's view of the server in private attributes (CPython
    3.11's): the address to connect to, and the "alive" pipe's writing end, which a forked
    process inherits already. ``ensure_running`` would start a server of this process's own
    (it knows no server it started itself): here the server runs as long as the test process
    that started it, so only the resource tracker is checked, as it would. A Python whose
    client holds more than that (newer ones add an authentication key) keeps a server of the
    script's own, as before."""
    state = vars(server_state._forkserver)
    if state.get("_forkserver_alive_fd") is None or "_forkserver_authkey" in state:
        return
    state["_forkserver_address"] = address
    state["ensure_running"] = resource_tracker.ensure_running


def _become(
    argv: list[str], cwd: str, env: dict[str, str], outputs: tuple[str, str], flags: int
) -> None:
    """In the forked process: take ``argv``, ``cwd`` and ``env`` as a started program has them,
    stdout and stderr opened on ``outputs`` (with ``flags``: truncate or append), line by line."""
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    for fd, path in zip((1, 2), outputs, strict=True):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | flags, 0o600)
        os.dup2(target, fd)
        os.close(target)
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    sys.argv = argv


def _exiting(run: Callable[[], object]) -> None:
    """``run()``, then what it registered with ``atexit`` (a store to stop, a folder to
    remove): a multiprocessing child ends with os._exit, which skips atexit."""
    try:
        run()
    finally:
        atexit._run_exitfuncs()


def _run(
    script: str, args: list[str], cwd: str, env: dict[str, str], out: str, err: str, server: str
) -> None:
    """In the forked process: become ``python SCRIPT ARGS...`` and run, forking what it starts
    from ``server`` (``_fork_from``)."""
    # A process group of its own (``start_fincap`` puts what the script starts in it too), so
    # that a timeout kills the script and its servers together. Not a session of its own: the
    # servers are forked by the test process's forkserver, in that session, and a process may
    # join a group of its own session only.
    os.setpgid(0, 0)
    _fork_from(server)
    _become([script, *args], cwd, env, (out, err), os.O_TRUNC)
    sys.path.insert(0, str(Path(script).parent))
    _exiting(lambda: runpy.run_path(script, run_name="__main__"))


def run_script(
    script: Path, args: list[str], cwd: Path, env: dict[str, str], timeout_s: float
) -> Finished:
    """Run ``script`` with ``args`` in a preloaded process; its status and output, or
    ``ScriptTimedOut`` after ``timeout_s`` (the process's session killed first)."""
    with tempfile.TemporaryDirectory(prefix="fincap-script-") as folder:
        out, err = Path(folder) / "stdout", Path(folder) / "stderr"
        process = forkserver().Process(
            target=_run,
            args=(str(script), args, str(cwd), env, str(out), str(err), _server_address()),
        )
        process.start()
        process.join(timeout_s)
        timed_out = process.exitcode is None
        if timed_out and process.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.kill()  # itself too, should it have left its session
            process.join()
        stdout = out.read_text(errors="replace") if out.exists() else ""
        stderr = err.read_text(errors="replace") if err.exists() else ""
    if timed_out:
        raise ScriptTimedOut(stdout, stderr)
    assert process.exitcode is not None
    return Finished(process.exitcode, stdout, stderr)


class Forked:
    """``subprocess.Popen``'s interface (what ``tests/live.py`` uses) to a forked process."""

    def __init__(self, process: BaseProcess, args: Sequence[str]) -> None:
        assert process.pid is not None, "not started"
        self._process = process
        self.pid: int = process.pid
        self.args = list(args)

    @property
    def returncode(self) -> int | None:
        """The exit status (minus the signal that ended it), ``None`` while it runs."""
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self._process.exitcode

    def send_signal(self, sig: int) -> None:
        if self._process.exitcode is None:  # as Popen: no signal to a process known to be gone
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _fincap(args: list[str], cwd: str, env: dict[str, str], log: str, group: int) -> None:
    """In the forked process: become ``fincap ARGS...``, its output appended to ``log``, in the
    process group ``group`` (its starter's: a script's timeout kills it with the script)."""
    from app.cli import main

    os.setpgid(0, group)
    _become(["fincap", *args], cwd, env, (log, log), os.O_APPEND)
    _exiting(main)


def start_fincap(args: Sequence[str], env: Mapping[str, str], log: Path) -> Forked:
    """``fincap ARGS...`` started in a preloaded process, with the environment ``env`` and its
    output appended to ``log``, in this process's working directory (as ``Popen`` starts it)."""
    process = forkserver().Process(
        target=_fincap, args=(list(args), os.getcwd(), dict(env), str(log), os.getpgrp())
    )
    process.start()
    return Forked(process, ["fincap", *args])
