"""Helpers for tests that talk to fincap over a real socket: uvicorn in a thread of the test
(``app_in_thread``), or ``fincap serve`` as a process of its own (``start_serve``: forked from a
process with the service imported, ``tests/preloaded.py``, or a new interpreter). Every live
server in the suite is started by one of the two.

They are written for a loaded machine (two cores shared by several test runs): readiness is
polled on the server's own endpoint with a generous deadline rather than guessed with sleeps,
a port is held bound from the moment it is chosen where the server can take the socket, and
every process a test starts is stopped, its children included, whatever the test's outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import httpx
import psutil
import uvicorn
from starlette.types import ASGIApp

from app.host.serving import Server
from persistence.embedded import free_port
from tests.preloaded import start_fincap

# Measured: `fincap serve` took about 30 s to answer /readyz (embedded database, analysis
# process) on the 2-core machine under other engineers' load, where 60 s had been the limit.
# Five minutes fails a server that never gets ready, without failing a slow one.
READY_DEADLINE_S = 300.0
STOP_GRACE_S = 60.0
# The longest pause between readiness polls: a server gets ready in 5-30 s here, and a pause
# that had grown to 1 s left it unnoticed for half a second on average. One client makes all
# of a wait's polls (a client each cost 20 ms of CPU for its TLS context), so a refused
# connection or a 503 costs about a millisecond.
MAX_POLL_PAUSE_S = 0.25
# Where a `fincap serve` keeps its help center's vectors (engines/help_center: computed once,
# read by later starts on the same data directory).
HELP_VECTORS = "help_center/help-vectors-*.npy"


def poll_until_ok(
    url: str, deadline_s: float = READY_DEADLINE_S, check: Callable[[], None] | None = None
) -> None:
    """Return once ``GET url`` answers 200; an ``AssertionError`` with the last answer after
    ``deadline_s``. Pauses between attempts grow from 50 ms to ``MAX_POLL_PAUSE_S``; ``check``
    runs before each attempt and raises when waiting is pointless (the server process died)."""
    with httpx.Client() as client:
        _poll(client, url, deadline_s, check)


def _poll(
    client: httpx.Client, url: str, deadline_s: float, check: Callable[[], None] | None
) -> None:
    """``poll_until_ok``'s loop, its attempts made with ``client``."""
    deadline = time.monotonic() + deadline_s
    pause = 0.05
    last = "no answer yet"
    while True:
        if check is not None:
            check()
        remaining = deadline - time.monotonic()
        try:
            response = client.get(url, timeout=min(10.0, max(1.0, remaining)))
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}: {exc}"
        else:
            if response.status_code == 200:
                return
            last = f"HTTP {response.status_code}: {response.text[:300]}"
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"{url} did not answer 200 within {deadline_s:.0f} s ({last})")
        time.sleep(min(pause, remaining))
        pause = min(pause * 2, MAX_POLL_PAUSE_S)


def wait_until_healthy(base: str, timeout: float = READY_DEADLINE_S) -> None:
    """Return once ``GET {base}/healthz`` answers 200; raise after ``timeout`` seconds."""
    poll_until_ok(f"{base}/healthz", timeout)


class ServerExited(AssertionError):
    """The server process ended while a test waited for it."""


class Process(Protocol):
    """What the helpers use of a started program: ``subprocess.Popen``'s, or ``Forked``'s."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | Any: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...
    def send_signal(self, sig: int) -> None: ...
    def kill(self) -> None: ...


def launch(
    command: Sequence[str], environment: Mapping[str, str], log: Path, fresh: bool = False
) -> Process:
    """Start ``command``, its output appended to ``log``. A ``fincap`` command (the console
    script, or ``python -m app.cli``) starts forked from a process that has the service imported
    already (``tests/preloaded.py``: 3 s of CPU less a start), unless ``fresh``; anything else as
    a new program. A test of the server's process tree asks for ``fresh``: a forked server
    shares the test process's multiprocessing resource tracker instead of starting its own."""
    program = list(command)
    log.open("ab").close()  # there once this returns, as with Popen (callers read it at once)
    if not fresh and Path(program[0]).name == "fincap":
        return start_fincap(program[1:], environment, log)
    if not fresh and program[:3] == [sys.executable, "-m", "app.cli"]:
        return start_fincap(program[3:], environment, log)
    with log.open("ab") as out:
        return subprocess.Popen(program, env=dict(environment), stdout=out, stderr=out)


def wait_ready(base: str, process: Process) -> None:
    """Return once the ``fincap serve`` ``process`` answers 200 on ``/readyz`` (its store and
    analysis process are up); ``ServerExited`` as soon as it ends instead."""

    def running() -> None:
        if process.poll() is not None:
            raise ServerExited(f"fincap serve exited early (code {process.returncode})")

    poll_until_ok(f"{base}/readyz", READY_DEADLINE_S, running)


def _children(process: Process) -> list[psutil.Process]:
    try:
        return psutil.Process(process.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _kill(processes: list[psutil.Process]) -> None:
    for child in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            child.kill()


def stop(process: Process, grace_s: float = STOP_GRACE_S) -> None:
    """Stop a server and everything it started: SIGTERM (a clean shutdown), SIGKILL after
    ``grace_s``, then SIGKILL to any child still alive. Safe on a process already gone."""
    children = _children(process)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=grace_s)
    _, survivors = psutil.wait_procs(children, timeout=grace_s)
    _kill(survivors)


def discard(process: Process) -> None:
    """End a server whose data directory the test throws away, at once: SIGKILL to it and to
    everything it started, then wait until they are gone. For a test's clean-up, where nothing
    of a clean shutdown is checked (``stop`` is the clean one; a clean ``fincap serve`` stop
    took 2-5 s here, mostly its embedded store's). Safe on a process already gone."""
    children = _children(process)
    if process.poll() is None:
        process.kill()
        process.wait(timeout=STOP_GRACE_S)
    _kill(children)
    # A killed child of the dead server is a zombie until init reaps it (a second here):
    # dead already, so it counts as gone.
    deadline = time.monotonic() + STOP_GRACE_S
    while any(_running(child) for child in children):
        assert time.monotonic() < deadline, "a killed server's child is still running"
        time.sleep(0.02)


def _running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# The data directories of the servers this process started: the first that holds help center
# vectors lends them to the next fresh data directory.
_served_data_dirs: list[Path] = []


def lend_help_vectors(data_dir: Path) -> None:
    """Copy the help center's vectors that an earlier server of this process computed into
    ``data_dir``, where it has none: that server reads them at start-up instead of embedding
    every article again (over a CPU-second each start). The file is named by a digest of the
    model and the articles, so a server only uses vectors of its own model and articles, and
    they are the very vectors it would compute."""
    target = data_dir / "help_center"
    if list(data_dir.glob(HELP_VECTORS)):
        return
    for earlier in _served_data_dirs:
        for vectors in earlier.glob(HELP_VECTORS):
            target.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):  # gone meanwhile: this server embeds them
                shutil.copyfile(vectors, target / vectors.name)
                return


@dataclass
class Served:
    """A running ``fincap serve``: its process, root URL and log (stdout and stderr)."""

    process: Process
    base: str
    log: Path


def start_serve(
    command: Sequence[str],
    env: Mapping[str, str] | Callable[[str], Mapping[str, str]],
    log: Path,
    attempts: int = 3,
    lend_vectors: bool = True,
    fresh: bool = False,
) -> Served:
    """Start ``command`` (``fincap serve``, the port appended) on a free port and wait until it
    is ready. ``env`` is the process's environment, or a function of the server's root URL
    that returns it (for ``FINCAP_PUBLIC_URL``). With ``lend_vectors``, a fresh data directory
    gets the help center vectors an earlier server computed (``lend_help_vectors``); a test of
    that computation passes False. ``fincap serve`` binds the port itself, so
    another process can take a port between our choosing it and the server binding it: that
    start fails with "address already in use" and the next attempt takes another port. On any
    failure the process is stopped and the error names the end of its log. ``fresh``: see
    ``launch``."""
    for attempt in range(1, attempts + 1):
        port = free_port()
        offset = log.stat().st_size if log.exists() else 0
        base = f"http://127.0.0.1:{port}"
        environment = env(base) if callable(env) else env
        data_dir = environment.get("FINCAP_DATA_DIR")
        if data_dir:
            if lend_vectors:
                lend_help_vectors(Path(data_dir))
            _served_data_dirs.append(Path(data_dir))
        process = launch([*command, "--port", str(port)], environment, log, fresh)
        try:
            wait_ready(base, process)
        except AssertionError as exc:  # exited early, or not ready by the deadline
            stop(process)
            output = log.read_bytes()[offset:].decode(errors="replace")
            taken = isinstance(exc, ServerExited) and "address already in use" in output.lower()
            if taken and attempt < attempts:
                continue
            raise AssertionError(f"{exc}; the server's log ends:\n{output[-3000:]}") from None
        except BaseException:
            stop(process)
            raise
        return Served(process, base, log)
    raise AssertionError("unreachable")  # the last attempt returns or raises


@contextlib.contextmanager
def refused_address() -> Iterator[str]:
    """``127.0.0.1:PORT`` where nothing listens for as long as the block runs: the port is
    held bound without listening, so no other process can take it and connecting is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"127.0.0.1:{held.getsockname()[1]}"


def bound_socket() -> socket.socket:
    """A listening-ready TCP socket on a free loopback port, for a server in a thread to take
    (``uvicorn.Server.serve(sockets=[...])``): the port is ours from the moment it is chosen."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


T = TypeVar("T")


@dataclass
class Threaded(Generic[T]):
    """An app served by uvicorn from a thread: its root URL, what its setup returned, and the
    server's event loop (stores made in the setup belong to it: use ``run``)."""

    base: str
    setup: T
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine on the server's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(READY_DEADLINE_S)


@contextlib.contextmanager
def app_in_thread(
    setup: Callable[[int], Awaitable[tuple[ASGIApp, T]]],
    teardown: Callable[[], Awaitable[None]] | None = None,
    ready_path: str | None = "/healthz",
    **config: Any,
) -> Iterator[Threaded[T]]:
    """Serve the app that ``setup(port)`` builds (on the server's own loop, so its store is
    bound there) from a thread, until the block ends; ``teardown`` runs on that loop after the
    server stops. The port is bound before the setup runs and handed to uvicorn, so no other
    process can take it in between; ``config`` goes to ``uvicorn.Config``. Ready once
    ``ready_path`` answers 200 (None, for a fake without one: once uvicorn has started)."""
    sock = bound_socket()
    port = sock.getsockname()[1]
    ready = threading.Event()
    holder: dict[str, Any] = {}

    async def serve() -> None:
        try:
            app, made = await setup(port)
            options = {"log_level": "warning", **config}
            # The server ``fincap serve`` runs: it ends open event streams when it stops.
            server = Server(uvicorn.Config(app, host="127.0.0.1", port=port, **options))
            holder.update(server=server, made=made, loop=asyncio.get_running_loop())
        finally:
            ready.set()  # also when the setup failed: the test fails at once, not at a deadline
        try:
            await server.serve(sockets=[sock])
        finally:
            if teardown is not None:
                await teardown()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(READY_DEADLINE_S), "server thread did not start"
        assert "server" in holder, "setting up the server failed (see the thread's traceback)"
        base = f"http://127.0.0.1:{port}"
        if ready_path is not None:
            poll_until_ok(f"{base}{ready_path}")
        else:
            deadline = time.monotonic() + READY_DEADLINE_S
            while not holder["server"].started:
                assert thread.is_alive(), "the server thread ended before it started serving"
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.01)
        yield Threaded(base, holder["made"], holder["loop"])
    finally:
        server = holder.get("server")
        if isinstance(server, uvicorn.Server):
            server.should_exit = True
        thread.join(STOP_GRACE_S)
        sock.close()
